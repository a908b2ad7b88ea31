package memfs

import (
	"strings"
	"testing"
)

func TestFindSecret(t *testing.T) {
	cases := []struct {
		name string
		text string
		want string // "" for no secret
	}{
		{"aws access key", "use AKIA2E0A8F3B244C9986 for the bucket", "AWS access key"},
		{"aws session key", "ASIAY34FZKBOKMUTVV7A", "AWS access key"},
		{"github classic token", "export GH=ghp_" + strings.Repeat("a1B2", 9), "GitHub token"},
		{"github oauth token", "gho_" + strings.Repeat("Z9y8", 9), "GitHub token"},
		{"github server token", "ghs_" + strings.Repeat("k3M4", 9), "GitHub token"},
		{"github fine-grained", "github_pat_" + strings.Repeat("A", 22) + "_" + strings.Repeat("b", 59), "GitHub fine-grained token"},
		{"slack bot token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "Slack token"},
		{"slack user token", "token xoxp-2233445566-7788990011-aBcDeF123456", "Slack token"},
		{"anthropic key", "ANTHROPIC_API_KEY sk-ant-api03-" + strings.Repeat("xY7_", 20), "Anthropic API key"},
		{"openai key", "sk-proj-" + strings.Repeat("Ab3d", 12), "API key (sk-)"},
		{"legacy sk key", "sk-" + strings.Repeat("q8Rw", 12), "API key (sk-)"},
		{"rsa private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----", "private key block"},
		{"openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----", "private key block"},
		{"pkcs8 private key", "-----BEGIN PRIVATE KEY-----", "private key block"},
		{"encrypted private key", "-----BEGIN ENCRYPTED PRIVATE KEY-----", "private key block"},
		{"password assignment", "connect with password=Tr0ub4dor&3x", "secret assignment"},
		{"api key yaml", "api_key: 9f8e7d6c5b4a3f2e1d0c", "secret assignment"},
		{"quoted token", `token = "a8F3kLm2Qp9Zx7Vb"`, "secret assignment"},
		{"client secret json", `"client_secret": "Yq3-7Hn_2Lp9Kd"`, "secret assignment"},
		{"uppercase env", "DB_PASSWORD=Xk9mP2qL7vN4", "secret assignment"},

		{"no secret", "Run make migrate before go test ./integration/...", ""},
		{"aws documented example", "AKIAIOSFODNN7EXAMPLE is the example key", ""},
		{"short AKIA word", "AKIA123 is too short", ""},
		{"ghp prefix alone", "tokens start with ghp_ followed by 36 chars", ""},
		{"short ghp", "ghp_abc123", ""},
		{"sk-learn", "use sk-learn for the model; pip install scikit-learn", ""},
		{"short sk", "sk-1234", ""},
		{"slack prefix alone", "Slack tokens look like xoxb-…", ""},
		{"public key block", "-----BEGIN PUBLIC KEY-----", ""},
		{"certificate block", "-----BEGIN CERTIFICATE-----", ""},
		{"password from env var", "password=$DB_PASSWORD", ""},
		{"password placeholder", "password: <your-password>", ""},
		{"templated token", "token={{ .Token }}", ""},
		{"token from code", "token = os.Getenv(\"TOKEN\")", ""},
		{"token field path", "token=request.headers.authorization", ""},
		{"low entropy word", "password=aaaaaaaaaaaa", ""},
		{"plain word value", "secret: classified", ""},
		{"prose about passwords", "Never put the password in the URL; the token expires in 3600 seconds.", ""},
		{"example key", "api_key=EXAMPLE_KEY_1234", ""},
		{"redacted", "token: REDACTED-1234abcd", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, found := FindSecret(tc.text)
			if found != (tc.want != "") || got != tc.want {
				t.Fatalf("FindSecret(%q) = %q, %v; want %q", tc.text, got, found, tc.want)
			}
		})
	}
}

func FuzzFindSecret(f *testing.F) {
	f.Add("password=Tr0ub4dor&3x")
	f.Add("sk-ant-api03-" + strings.Repeat("x", 40))
	f.Fuzz(func(t *testing.T, s string) {
		kind, found := FindSecret(s)
		if found != (kind != "") {
			t.Fatalf("FindSecret(%q) = %q, %v", s, kind, found)
		}
	})
}
