# OPA policies whose Rego shares a package across files (data.terraform.lib), which the Policies API cannot carry.
policy "deny-public-ingress" {
  query             = "data.terraform.network.deny"
  enforcement_level = "mandatory"
}

policy "require-flow-logs" {
  query             = "data.terraform.network.warn"
  enforcement_level = "advisory"
}
