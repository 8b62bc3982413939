package terraform.lib

# Rego v1 syntax, read by the service's default OPA runtime (0.61.x for latest) and by a pinned 1.x.
import rego.v1

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
