package main

import (
	"context"
	"strings"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
)

// maxNamedProblems caps how many damaged files a warning names; podflow verify lists all.
const maxNamedProblems = 10

// warnUnverified applies verify's checks to a podflow bundle about to be analyzed or
// converted, and warns, naming the files, when it does not match its manifest: the
// findings would rest on files that were changed, added or lost after collection.
func warnUnverified(ctx context.Context, log logrus.FieldLogger, input string, b *bundle.Bundle) error {
	if b.Manifest == nil {
		return nil
	}
	problems, err := bundle.VerifyContext(ctx, b)
	if err != nil || len(problems) == 0 {
		return err
	}
	named := make([]string, 0, maxNamedProblems)
	for _, p := range problems {
		if len(named) == maxNamedProblems {
			named = append(named, "...")
			break
		}
		named = append(named, p.Kind+" "+p.Path)
	}
	log.WithFields(logrus.Fields{"input": input, "problems": len(problems)}).Warnf(
		"%s does not match its manifest (%s): what it says may have been altered after collection; podflow verify lists every problem",
		input, strings.Join(named, ", "))
	return nil
}

// warnUnreadable names the input files that could not be read: the rest was analyzed
// without them.
func warnUnreadable(log logrus.FieldLogger, input string, rep *importer.Report) {
	if rep == nil {
		return
	}
	for _, f := range rep.Files {
		if f.Status == importer.StatusUnreadable {
			log.WithFields(logrus.Fields{"input": input, "file": f.Path}).Warnf("%s left out: %s", f.Path, f.Reason)
		}
	}
}
