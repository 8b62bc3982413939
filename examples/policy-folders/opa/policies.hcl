# An OPA policy set: each query names a package and rule of the .rego files below.
policy "deny-public-bucket-acls" {
  query             = "data.terraform.policies.deny_public_buckets.deny"
  enforcement_level = "mandatory"
  description       = "No S3 bucket may be readable by everyone."
}

policy "require-encrypted-volumes" {
  query = "data.terraform.policies.require_encrypted_volumes.deny"
}
