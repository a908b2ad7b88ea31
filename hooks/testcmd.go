package hooks

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// testCommand matches the shell commands that run a project's tests. The
// patterns here are compiled on first use, not at every hook's start.
var testCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[;&|(\s])(` +
		`go\s+test|gotestsum|pytest|py\.test|python3?\s+-m\s+(pytest|unittest)|tox|nox|` +
		`(npm|pnpm|yarn|bun)\s+(run\s+)?test|npx\s+(jest|vitest|mocha)|jest|vitest|mocha|` +
		`cargo\s+(test|nextest)|make\s+(test|check)|ctest|mvn\s+(\S+\s+)*test|(\./)?gradlew?\s+(\S+\s+)*test|` +
		`dotnet\s+test|mix\s+test|(bundle\s+exec\s+)?rspec|rake\s+test|phpunit|swift\s+test|bazel\s+test|deno\s+test)` +
		`($|[\s;&|)])`)
})

// testWords are, lower-cased, the words of testCommand: a command that
// holds none of them runs no test, and is read without compiling it (the
// post-tool hook runs at every shell command an agent runs).
var testWords = []string{"test", "tox", "nox", "jest", "mocha", "check", "rspec", "phpunit"}

// IsTestCommand reports whether a shell command runs tests.
func IsTestCommand(cmd string) bool {
	if !holdsAny(cmd, testWords) {
		return false
	}
	return testCommand().MatchString(cmd)
}

// holdsAny reports whether text holds one of words (lower-case ASCII) in
// any case, as an expression's (?i) reads it: its case folding also takes
// the long s "ſ" for an s (the Kelvin sign lower-cases to k).
func holdsAny(text string, words []string) bool {
	lower := strings.ReplaceAll(strings.ToLower(text), "ſ", "s")
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(lower, w) })
}

var (
	testFailed = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)(^FAIL\b|^--- FAIL|\bFAILED\b|^\s*\d+ failed|\bfailures?: [1-9]|\b[1-9]\d* (tests? )?failed|npm ERR!|^panic: |error\[E\d+\]|test result: FAILED|Tests:\s+\d+ failed|BUILD FAILURE)`)
	})
	testPassed = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)(^ok\s+\S+|^PASS$|\b\d+ passed\b|test result: ok|Tests:\s+\d+ passed|BUILD SUCCESS|^OK( \(|$)|All tests passed|\bpassed\b.*\b0 failed)`)
	})
)

// TestOutcome reads a test tool call's response: passed is true for a green
// run; known is false when the response says neither way.
func TestOutcome(response json.RawMessage) (passed, known bool) {
	if len(response) == 0 {
		return false, false
	}
	var r map[string]any
	var text string
	if json.Unmarshal(response, &r) == nil {
		for _, k := range []string{"exit_code", "exitCode", "returncode", "return_code", "status"} {
			if v, ok := r[k].(float64); ok {
				return v == 0, true
			}
		}
		if v, ok := r["interrupted"].(bool); ok && v {
			return false, true
		}
		var b strings.Builder
		for _, k := range []string{"stdout", "stderr", "output", "aggregated_output", "formatted_output", "llmContent", "returnDisplay"} {
			if s, ok := r[k].(string); ok {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
		text = b.String()
	} else {
		var s string
		if json.Unmarshal(response, &s) == nil {
			text = s
		} else {
			text = string(response)
		}
	}
	if testFailed().MatchString(text) {
		return false, true
	}
	if testPassed().MatchString(text) {
		return true, true
	}
	return false, false
}
