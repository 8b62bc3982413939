package terraform.network

# Rego v1 syntax, read by the service's default OPA runtime (0.61.x for latest) and by a pinned 1.x.
import rego.v1

import data.terraform.lib

deny contains msg if {
	some rule in lib.changed("aws_security_group_rule")
	rule.change.after.cidr_blocks[_] == "0.0.0.0/0"
	msg := sprintf("%s opens ingress to the whole internet", [rule.address])
}

warn contains msg if {
	some vpc in lib.changed("aws_vpc")
	not lib.has_flow_log(vpc.address)
	msg := sprintf("%s has no flow log", [vpc.address])
}
