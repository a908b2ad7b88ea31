package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/borg-memory/borg/domain"
)

// Verdicts an external judge may return.
const (
	VerdictChanged = "changed"
	VerdictIgnored = "ignored"
	VerdictUnclear = "unclear"
)

// maxEvidence bounds the work and words sent to a judge.
const maxEvidence = 12000

// JudgePrompt is what an external judge (BORG_JUDGE, e.g. `claude -p`) reads
// for one asked lesson: the lesson, the work since the ask, and the agent's
// words with this lesson's own declaration stripped, so the judge rules on
// the work rather than on the agent's claim.
func JudgePrompt(l domain.Lesson, work, agentWords string) string {
	words := domain.StripDeclaration(agentWords, l.ID)
	var b strings.Builder
	b.WriteString("You are judging whether a coding agent changed its work because of one team lesson.\n")
	b.WriteString("Answer with exactly one word on the first line: changed, ignored or unclear.\n")
	b.WriteString("changed = the work since the lesson was shown acts on the lesson's point; ignored = it does not; unclear = you cannot tell.\n\n")
	fmt.Fprintf(&b, "LESSON %s:\n%s\n%s\n\n", l.ID, quoteSafe(l.Gist, 1000), clip(l.Body, 2000))
	fmt.Fprintf(&b, "WORK SINCE THE LESSON WAS SHOWN (diff):\n%s\n\n", clip(work, maxEvidence))
	fmt.Fprintf(&b, "THE AGENT'S LAST WORDS:\n%s\n", clip(words, 4000))
	return b.String()
}

var verdictWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(changed|ignored|unclear)\b`) })

// ParseVerdict reads a judge's answer: the first verdict word it contains,
// or unclear.
func ParseVerdict(out string) string {
	if m := verdictWord().FindStringSubmatch(out); m != nil {
		return strings.ToLower(m[1])
	}
	return VerdictUnclear
}

// judgeWaitDelay bounds how long RunJudge waits, once its context is done,
// for the judge's output to close: a process the judge left behind may
// hold it open.
const judgeWaitDelay = 200 * time.Millisecond

// RunJudge runs the judge command through the shell with prompt on stdin.
// When ctx is done the whole judge stops, not only its shell: the command
// runs in a process group of its own, which is killed (killGroup), and
// RunJudge returns within judgeWaitDelay even if something still holds
// the output open.
// JudgingEnv is set to 1 in a judge's environment (RunJudge); a hook that
// finds it does nothing: it runs inside a judge borg started.
const JudgingEnv = "BORG_JUDGING"

func RunJudge(ctx context.Context, command, prompt string) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	// A judge that is an agent ("claude -p") runs the project's hooks
	// itself: JudgingEnv tells borg's hooks in it to stand aside, or each
	// judged stop would ask, and judge, again.
	cmd.Env = append(os.Environ(), JudgingEnv+"=1")
	killGroup(cmd)
	cmd.WaitDelay = judgeWaitDelay
	cmd.Stdin = strings.NewReader(prompt)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && !(errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil) {
		// (A judge that answered and exited 0, leaving something in the
		// background that holds its output open, has answered.)
		return VerdictUnclear, fmt.Errorf("judge %q: %v: %s", command, err, quoteSafe(errb.String(), 200))
	}
	return ParseVerdict(out.String()), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // cut between characters: the judge reads text, not half a rune
	}
	return s[:n] + "\n[… clipped]"
}

// correctionMarkers are phrases with which an engineer tells an agent it got
// something wrong.
var correctionMarkers = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^\s*no\b|\bthat'?s (wrong|not right|incorrect)|\bnot what i\b|\bwrong\b|\bdon'?t\b|\bdo not\b|\bshouldn'?t\b|\bundo\b|\brevert\b|\broll ?back\b|\bi said\b|\bi told you\b|\bwhy did you\b|\binstead\b|\bstop\b)`)
})

// IsCorrection reports whether a user prompt corrects the agent on the point
// of a lesson it was asked about: a correction phrase plus at least two of
// the lesson's distinctive words.
func IsCorrection(prompt string, l domain.Lesson) bool {
	if !correctionMarkers().MatchString(prompt) {
		return false
	}
	p := map[string]bool{}
	for _, w := range domain.Words(prompt) {
		p[w] = true
	}
	n := 0
	for _, w := range domain.DistinctiveWords(l.Gist + " " + l.Body) {
		if p[w] {
			n++
		}
	}
	return n >= 2
}
