# A Sentinel policy set: each policy's code is ./<name>.sentinel unless `source` says otherwise.
policy "require-owner-tag" {
  enforcement_level = "soft-mandatory"
}

policy "limit-instance-types" {
  source            = "./compute/limit-instance-types.sentinel"
  enforcement_level = "hard-mandatory"
}
