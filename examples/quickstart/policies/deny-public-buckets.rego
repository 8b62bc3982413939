# No S3 bucket ACL may grant public read or write.
package terraform

import rego.v1

public_acls := {"public-read", "public-read-write"}

deny contains msg if {
	some change in input.plan.resource_changes
	change.type == "aws_s3_bucket_acl"
	public_acls[change.change.after.acl]
	msg := sprintf("%s grants public access with ACL %q", [change.address, change.change.after.acl])
}
