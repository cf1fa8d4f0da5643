package analyze

import "testing"

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Command("kubectl get pod -n %s %s", "shop", "web-1"), "kubectl get pod -n shop web-1"},
		{Command("kubectl get pod -n %s %s", "shop", "app;id;"), "kubectl get pod -n shop NAME" + invalidNameNote},
		{Command("kubectl get pods -n %s", "$(id>x)"), "kubectl get pods -n NAME" + invalidNameNote},
		{Command("kubectl get pods -n %s -l %s", "shop", Value("app=web,tier in (a b)")), "kubectl get pods -n shop -l 'app=web,tier in (a b)'"},
		{Command("crictl pull %s", Value("registry.local:5000/app@sha256:ab")), "crictl pull registry.local:5000/app@sha256:ab"},
		{Command("crictl pull %s", Value("x';rm -rf ~;'")), `crictl pull 'x'\'';rm -rf ~;'\'''`},
		{Command("kubectl get pod %s -o jsonpath='{.status.%s}'", "p", Literal("containerStatuses")), "kubectl get pod p -o jsonpath='{.status.containerStatuses}'"},
		{Command("kubectl describe limitrange -n %s %s", "shop", Names{"a", "b`id`"}), "kubectl describe limitrange -n shop a NAME" + invalidNameNote},
		{Command("kubectl logs %s --tail=%d", "p", 50), "kubectl logs p --tail=50"},
		{Command("kubectl describe node %s", ""), "kubectl describe node NAME" + unknownNameNote},
		{Command("kubectl describe node %s %s", "", "a;b"), "kubectl describe node NAME NAME" + invalidNameNote},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}
