package terraform.policies.deny_public_buckets

import rego.v1

public_acls := {"public-read", "public-read-write"}

deny contains message if {
	some change in input.plan.resource_changes
	change.type == "aws_s3_bucket_acl"
	change.change.after.acl in public_acls
	message := sprintf("%s makes a bucket public", [change.address])
}
