policy "deny-public" {
  query             = "data.terraform.deny"
  enforcement_level = "mandatory"
}
