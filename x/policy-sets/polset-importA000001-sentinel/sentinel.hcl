policy "require-tags" {
  source            = "./require-tags.sentinel"
  description       = "Every resource has an owner"
  enforcement_level = "soft-mandatory"
}
