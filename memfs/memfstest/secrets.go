// Package memfstest holds test helpers for the store: realistic-looking
// fake credentials, built at run time so the repository itself carries no
// literal token a secret scanner (or a host's push protection) would flag.
package memfstest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Secret is one fake credential in a realistic format.
type Secret struct {
	Name string // the format: "AWS access key", "GitHub classic token", …
	Text string // a line of text carrying it
	// Token is the secret part itself: no id, file name or message may
	// carry any fragment of it.
	Token string
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	lower  = "abcdefghijklmnopqrstuvwxyz0123456789"
	hexlow = "0123456789abcdef"
	digits = "0123456789"
	b64    = alnum + "+/"
	url64  = alnum + "_-"
)

// gen draws strings from a fixed seed: the same secrets every run.
type gen struct{ r *rand.Rand }

func (g gen) s(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[g.r.IntN(len(alphabet))])
	}
	return b.String()
}

// Secrets returns one fake credential of each common format. A prefix is
// joined from two pieces so that no literal in this file reads as a token.
func Secrets() []Secret {
	g := gen{rand.New(rand.NewPCG(15, 4))}
	j := func(parts ...string) string { return strings.Join(parts, "") }
	jwtPart := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	jwt := j(jwtPart(`{"alg":"HS256","typ":"JWT"}`), ".",
		jwtPart(`{"sub":"`+g.s(digits, 10)+`","name":"deploy bot","iat":1716239022}`), ".", g.s(url64, 43))
	pem := j("-----BEGIN ", "RSA PRIVATE KEY-----\n", g.s(b64, 64), "\n", g.s(b64, 64), "\n-----END ", "RSA PRIVATE KEY-----")
	out := []Secret{
		{Name: "AWS access key", Token: j("AK", "IA", g.s(upper, 16))},
		{Name: "GitHub classic token", Token: j("gh", "p_", g.s(alnum, 36))},
		{Name: "GitHub OAuth token", Token: j("gh", "o_", g.s(alnum, 36))},
		{Name: "GitHub fine-grained token", Token: j("github", "_pat_", g.s(alnum, 22), "_", g.s(alnum, 59))},
		{Name: "GitLab personal token", Token: j("gl", "pat-", g.s(alnum, 20))},
		{Name: "Slack bot token", Token: j("xo", "xb-", g.s(digits, 12), "-", g.s(digits, 13), "-", g.s(alnum, 24))},
		{Name: "Slack bot token (lower case)", Token: j("xo", "xb-", g.s(digits, 12), "-", g.s(digits, 13), "-", g.s(lower, 24))},
		{Name: "Stripe live key", Token: j("sk", "_live_", g.s(alnum, 24))},
		{Name: "Google API key", Token: j("AI", "za", g.s(url64, 35))},
		{Name: "OpenAI project key", Token: j("sk", "-proj-", g.s(url64, 74), "T3Blbk", "FJ", g.s(url64, 74))},
		{Name: "OpenAI key without marker", Token: j("sk", "-proj-", g.s(alnum, 48))},
		{Name: "Anthropic API key", Token: j("sk", "-ant-api03-", g.s(url64, 93), "AA")},
		{Name: "npm token", Token: j("np", "m_", g.s(alnum, 36))},
		{Name: "PyPI token", Token: j("py", "pi-AgEIcHlwaS5vcmc", g.s(url64, 60))},
		{Name: "JWT", Token: jwt},
		{Name: "private key block", Token: pem},
		{Name: "Azure storage connection string", Token: g.s(b64, 86) + "=="},
		{Name: "Postgres URL with password", Token: g.s(alnum, 14)},
		{Name: "SendGrid key", Token: j("S", "G.", g.s(url64, 22), ".", g.s(url64, 43))},
		{Name: "Twilio API key", Token: j("S", "K", g.s(hexlow, 32))},
		{Name: "password assignment", Token: g.s(alnum, 18)},
	}
	for i := range out {
		s := &out[i]
		switch s.Name {
		case "Azure storage connection string":
			s.Text = "DefaultEndpointsProtocol=https;AccountName=billing;AccountKey=" + s.Token + ";EndpointSuffix=core.windows.net"
		case "Postgres URL with password":
			s.Text = "connect with postgres://billing:" + s.Token + "@db.internal:5432/billing"
		case "password assignment":
			s.Text = "the staging db uses DB_PASSWORD=" + s.Token
		case "private key block":
			s.Text = "deploy with this key:\n" + s.Token
		default:
			s.Text = "use " + s.Token + " for the deploy"
		}
	}
	return out
}
