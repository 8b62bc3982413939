# Every S3 bucket names its owner. The level comes from an input, so a set parameter can set it per set.
policy {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0.0"
    }
  }
}

input "require_tags_level" {
  type        = string
  default     = "mandatory"
  description = "How hard a bucket without an Owner tag stops a run: advisory, mandatory_overridable or mandatory"
}

resource_policy "aws_s3_bucket" "require_owner_tag" {
  enforcement_level = input.require_tags_level

  enforce {
    condition     = core::try(attrs.tags.Owner, "") != ""
    error_message = "Every S3 bucket needs an Owner tag."
  }
}
