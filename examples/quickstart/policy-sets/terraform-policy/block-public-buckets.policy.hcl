# A bucket's public access block keeps every public path closed, when it is made and whenever it changes.
policy {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0.0"
    }
  }
}

resource_policy "aws_s3_bucket_public_access_block" "all_public_access_blocked" {
  enforcement_level = "mandatory_overridable"
  operations        = ["create", "update"]

  locals {
    settings = [
      core::try(attrs.block_public_acls, false),
      core::try(attrs.block_public_policy, false),
      core::try(attrs.ignore_public_acls, false),
      core::try(attrs.restrict_public_buckets, false),
    ]
  }

  enforce {
    condition     = core::alltrue(local.settings)
    error_message = "Every setting of aws_s3_bucket_public_access_block must be true."
  }
}
