package rules

import (
	"go/types"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestTmpDependents(t *testing.T) {
	s := loadRulesSource(t, ".")
	uses := map[string]map[string][]string{}
	for id, obj := range s.info.Uses {
		if obj.Pkg() != s.pkg || !obj.Pos().IsValid() {
			continue
		}
		if _, ok := obj.(*types.PkgName); ok {
			continue
		}
		from, decl := s.file(id.Pos()), s.file(obj.Pos())
		if from == decl || !s.isRuleFile(from) || !s.declaredAtTop(obj) {
			continue
		}
		if uses[from] == nil {
			uses[from] = map[string][]string{}
		}
		if !slices.Contains(uses[from][decl], id.Name) {
			uses[from][decl] = append(uses[from][decl], id.Name)
		}
	}
	var files []string
	for f := range uses {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		var parts []string
		for d, ns := range uses[f] {
			sort.Strings(ns)
			parts = append(parts, d+"["+strings.Join(ns, ",")+"]")
		}
		sort.Strings(parts)
		t.Logf("%s: %s", f, strings.Join(parts, " "))
	}
	t.Logf("%d of %d rule files", len(files), len(s.ruleFiles))
}
