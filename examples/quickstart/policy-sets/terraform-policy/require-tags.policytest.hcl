policytest {
  targets = ["require-tags.policy.hcl"]
}

resource "aws_s3_bucket" "tagged" {
  attrs = {
    tags = { Owner = "platform" }
  }
}

resource "aws_s3_bucket" "untagged" {
  expect_failure = true
  attrs = {
    tags = {}
  }
}
