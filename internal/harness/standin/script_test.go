package standin

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shellBuiltins are the words in command position of the chart's scripts
// that busybox ash runs itself.
var shellBuiltins = []string{"echo", "set", "true", "break", "[", "[[", "while", "if", "then", "do", "done", "fi", "else"}

// scriptCommands lists the command words of a chart script: the first word
// of every simple command, through pipes, lists and command substitutions.
// Heredocs fed to bash or sh are script; any other heredoc is data.
func scriptCommands(script string) []string {
	quoted := regexp.MustCompile(`'[^']*'|"[^"$]*"`)
	heredoc := regexp.MustCompile(`<<-?'?(\w+)'?`)
	seen := map[string]bool{}
	var cmds []string
	var dataEnd string
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if dataEnd != "" {
			if line == dataEnd {
				dataEnd = ""
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || line == "EOF" {
			continue
		}
		if m := heredoc.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "bash ") && !strings.HasPrefix(line, "sh ") {
			dataEnd = m[1]
		}
		line = quoted.ReplaceAllString(line, "Q")
		for _, seg := range regexp.MustCompile(`\$\(|\|\||&&|[|;]`).Split(line, -1) {
			words := strings.Fields(seg)
			for len(words) > 0 && slices.Contains([]string{"if", "while", "then", "do", "!"}, words[0]) {
				words = words[1:]
			}
			if len(words) == 0 || regexp.MustCompile(`^\w+=`).MatchString(words[0]) || strings.HasPrefix(words[0], "]") {
				continue
			}
			if w := words[0]; !seen[w] {
				seen[w] = true
				cmds = append(cmds, w)
			}
		}
	}
	return cmds
}

func TestScriptCommands(t *testing.T) {
	// Pieces of the chart's scripts (pre-install, the apiserver's wait,
	// the static-resource job), as rendered.
	script := `bash <<'EOF'
set -ex
mkdir -p /opt/configs
cp -r -L /opt/mount/* /opt/configs/
openssl req -x509 -sha256 -new -nodes -days 3650 -newkey rsa:3072 -keyout "/opt/certs/ca.key" -out "/opt/certs/ca.crt" -subj "/C=xx/CN=ca/"
echo '{"CN":"system:admin","names":[{"O":"system:masters"}]}' | cfssl gencert -ca=/opt/certs/ca.crt - | cfssljson -bare /opt/certs/karmada
karmada_ca=$(base64 /opt/certs/server-ca.crt | tr -d '\r\n')
sed -i'' -e "s/{{ ca_crt }}/${karmada_ca}/g" /opt/configs/cert.yaml
while true; do
  if curl --connect-timeout 2 ${ETCD_ENDPOINT} || [ $? -eq 52 ]; then
    break
  fi
  sleep 2
done
while [[ $(kubectl --kubeconfig /etc/kubeconfig get configmap karmada-version -o jsonpath='{.data.karmadaVersion}') != v1.18.2 ]]; do
  echo "wait"; sleep 2
done
kubectl --kubeconfig /etc/kubeconfig apply -f - <<InnerEOF
apiVersion: v1
kind: ConfigMap
data:
  karmadaVersion: v1.18.2
InnerEOF
EOF`
	want := []string{"bash", "set", "mkdir", "cp", "openssl", "echo", "cfssl", "cfssljson", "base64", "tr", "sed",
		"true", "curl", "[", "break", "fi", "sleep", "done", "[[", "kubectl"}
	if got := scriptCommands(script); !slices.Equal(got, want) {
		t.Errorf("scriptCommands:\n got  %q\n want %q", got, want)
	}
}
