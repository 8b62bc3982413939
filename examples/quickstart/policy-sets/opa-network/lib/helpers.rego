package terraform.lib

changed(type) := [rc |
	some rc in input.plan.resource_changes
	rc.type == type
	some action in rc.change.actions
	action in {"create", "update"}
]

has_flow_log(address) if {
	some log in changed("aws_flow_log")
	log.change.after.vpc_id == address
}
