package terraform.policies.require_encrypted_volumes

import rego.v1

deny contains message if {
	some change in input.plan.resource_changes
	change.type == "aws_ebs_volume"
	not change.change.after.encrypted
	message := sprintf("%s is not encrypted", [change.address])
}
