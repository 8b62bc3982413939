policy "restrict-types" {
  source            = "./restrict-types.sentinel"
  enforcement_level = "hard-mandatory"
}
