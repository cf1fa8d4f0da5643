package main

// The extraction program builds these packages; importing them here keeps them, and
// their checksums, in this module's requirements.
import (
	_ "github.com/zricethezav/gitleaks/v8/cmd/generate/config/base"
	_ "github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"
	_ "github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"
	_ "github.com/zricethezav/gitleaks/v8/config"
)
