policytest {
  targets = ["block-public-buckets.policy.hcl"]
}

resource "aws_s3_bucket_public_access_block" "all_blocked" {
  attrs = {
    block_public_acls       = true
    block_public_policy     = true
    ignore_public_acls      = true
    restrict_public_buckets = true
  }
}

resource "aws_s3_bucket_public_access_block" "policy_open" {
  expect_failure = true
  attrs = {
    block_public_acls       = true
    block_public_policy     = false
    ignore_public_acls      = true
    restrict_public_buckets = true
  }
}
