package terraform

deny[msg] { msg := "no public buckets" }
