# A versioned policy set, laid out as HCP Terraform reads it from version control: a module, a static import,
# a parameter, and policies whose labels are not policy names (the Policies API would refuse them).
module "tfplan-functions" {
  source = "./modules/tfplan-functions.sentinel"
}

import "static" "approved" {
  source = "./data/approved.json"
  format = "json"
}

param "max_instances" {
  value = 10
}

policy "limit-instance-count.sentinel" {
  source            = "./limit-instance-count.sentinel"
  enforcement_level = "soft-mandatory"
}

policy "approved-regions" {
  source            = "./approved-regions.sentinel"
  enforcement_level = "hard-mandatory"
}
