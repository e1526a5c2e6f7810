package matrix

import (
	yamlv3 "go.yaml.in/yaml/v3"
)

// computeCapabilityTexts returns each target's compute_capability as written in the file, by
// target index ("" where a target gives none). The YAML-to-JSON decoding of Parse reads an
// unquoted 9.0 as the number 9 and hands the string field "9"; the node's text keeps "9.0",
// which is what the user wrote and what Triton looks engines up by.
func computeCapabilityTexts(data []byte) map[int]string {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return nil // Parse has already decoded the file; nothing better to say here
	}
	root := deref(&doc)
	if root.Kind == yamlv3.DocumentNode && len(root.Content) == 1 {
		root = deref(root.Content[0])
	}
	targets := mapValue(root, "targets")
	if targets == nil || targets.Kind != yamlv3.SequenceNode {
		return nil
	}
	out := map[int]string{}
	for i, t := range targets.Content {
		if cc := mapValue(deref(t), "compute_capability"); cc != nil && cc.Kind == yamlv3.ScalarNode && cc.ShortTag() != "!!null" {
			out[i] = cc.Value
		}
	}
	return out
}

// mapValue is the value node of key in the mapping n, aliases followed; nil when there is none.
func mapValue(n *yamlv3.Node, key string) *yamlv3.Node {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

func deref(n *yamlv3.Node) *yamlv3.Node {
	for n != nil && n.Kind == yamlv3.AliasNode {
		n = n.Alias
	}
	return n
}
