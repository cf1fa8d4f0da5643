package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"podflow.dev/podflow/collect"
	"podflow.dev/podflow/index"
)

type fleetRunOptions struct {
	*globalOptions
	store         storeFlags
	kubeconfig    string
	context       string
	namespace     string
	name          string
	image         string
	shards        int
	parallelism   int
	backoffPerIdx int
	blobsHostPath string
	blobsClaim    string
	hostNetwork   bool
	wait          bool
	timeout       time.Duration
	pullPolicy    string
	runAsUser     int64
}

func newFleetRunCmd(g *globalOptions) *cobra.Command {
	o := &fleetRunOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "run --kube NAMESPACE --image IMAGE --db postgres://...",
		Short: "Re-analyze the index's kept inputs as a Kubernetes Indexed Job, one shard per index",
		Long: `fleet run creates an Indexed Job: --shards completions, --parallelism pods at a time, each
running 'podflow fleet worker' on its shard (JOB_COMPLETION_INDEX) against the index, with the
kept inputs mounted at /blobs. backoffLimitPerIndex retries a failing index on its own and
marks it failed without stopping the others, so one poisoned input costs one shard. The
index's URL goes to the pods in a Secret, never in the Job's spec. With --wait it follows the
Job to its end and reports the completed and failed indexes.`,
		Example: `  podflow fleet run --kube podflow --image registry.internal/podflow:v1 \
    --db postgres://podflow:secret@db.podflow/podflow --blobs-claim podflow-blobs \
    --shards 16 --parallelism 4 --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runFleetRun(cmd.Context(), o)
		},
	}
	o.store.add(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account)")
	f.StringVar(&o.context, "context", "", "kubeconfig context to use")
	f.StringVar(&o.namespace, "kube", "", "the namespace to run the Job in")
	f.StringVar(&o.name, "name", "", "the Job's name (default podflow-reanalyze-<time>)")
	f.StringVar(&o.image, "image", "", "an image holding podflow at /podflow or on PATH")
	f.StringVar(&o.pullPolicy, "image-pull-policy", "IfNotPresent", "the pods' image pull policy")
	f.IntVar(&o.shards, "shards", 0, "completions: the tickets are split into this many shards (default 2 × parallelism)")
	f.IntVar(&o.parallelism, "parallelism", 2, "pods running at once")
	f.IntVar(&o.backoffPerIdx, "backoff-limit-per-index", 1, "retries of a failing index before it is marked failed")
	f.StringVar(&o.blobsHostPath, "blobs-host-path", "", "the kept inputs as a folder on every node (hostPath)")
	f.StringVar(&o.blobsClaim, "blobs-claim", "", "the kept inputs as a PersistentVolumeClaim (ReadOnlyMany)")
	f.BoolVar(&o.hostNetwork, "host-network", false, "run the pods on the node's network (an index on the node's loopback)")
	f.BoolVar(&o.wait, "wait", false, "follow the Job to its end and report completed and failed indexes")
	f.Int64Var(&o.runAsUser, "run-as-user", 65534, "the user the workers run as; it must be able to read the kept inputs")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "with --wait, give up after this long")
	return cmd
}

func (o *fleetRunOptions) validate() error {
	switch {
	case o.namespace == "":
		return usageError("--kube: name the namespace to run the Job in")
	case o.image == "":
		return usageError("--image: name an image that holds podflow")
	case !index.IsPostgres(o.store.db):
		return usageError("--db: the pods need a PostgreSQL index (postgres://...); a SQLite file must not be shared over a network filesystem")
	case (o.blobsHostPath == "") == (o.blobsClaim == ""):
		return usageError("give one of --blobs-host-path and --blobs-claim")
	case o.parallelism < 1:
		return usageError("--parallelism must be at least 1")
	}
	if o.shards == 0 {
		o.shards = 2 * o.parallelism
	}
	if o.name == "" {
		o.name = "podflow-reanalyze-" + time.Now().UTC().Format("20060102t150405")
	}
	return nil
}

// fleetJob builds the Indexed Job and the Secret that carries the index's URL.
func fleetJob(o *fleetRunOptions) (*batchv1.Job, *corev1.Secret) {
	labels := map[string]string{"app.kubernetes.io/name": "podflow", "app.kubernetes.io/component": "fleet-worker", "podflow.dev/run": o.name}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: o.namespace, Labels: labels},
		StringData: map[string]string{"index": o.store.db},
	}
	vol := corev1.Volume{Name: "blobs"}
	if o.blobsHostPath != "" {
		dir := corev1.HostPathDirectory
		vol.HostPath = &corev1.HostPathVolumeSource{Path: o.blobsHostPath, Type: &dir}
	} else {
		vol.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.blobsClaim, ReadOnly: true}
	}
	indexed := batchv1.IndexedCompletion
	completions, parallelism := int32(o.shards), int32(o.parallelism)
	perIndex := int32(o.backoffPerIdx)
	// backoffLimit counts all retries together; with a limit per index it must not end
	// the Job first.
	total := int32(o.shards * (o.backoffPerIdx + 1))
	noToken := false
	nonRoot, noEscalation, readOnlyRoot := o.runAsUser != 0, false, true
	user := o.runAsUser
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: o.namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          &completions,
			Parallelism:          &parallelism,
			BackoffLimitPerIndex: &perIndex,
			BackoffLimit:         &total,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &noToken,
					HostNetwork:                  o.hostNetwork,
					// A large input spills to a temporary file; the root filesystem is read-only.
					Volumes: []corev1.Volume{vol, {Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					Containers: []corev1.Container{{
						Name:            "worker",
						Image:           o.image,
						ImagePullPolicy: corev1.PullPolicy(o.pullPolicy),
						Command: []string{"podflow", "fleet", "worker", "--blobs", "/blobs",
							"--shards", fmt.Sprint(o.shards), "--tenant", o.store.tenant},
						Env: []corev1.EnvVar{{Name: indexEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: o.name}, Key: "index"}}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "blobs", MountPath: "/blobs", ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}},
						SecurityContext: &corev1.SecurityContext{RunAsUser: &user, RunAsNonRoot: &nonRoot, AllowPrivilegeEscalation: &noEscalation,
							ReadOnlyRootFilesystem: &readOnlyRoot, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
				},
			},
		},
	}
	return job, secret
}

func runFleetRun(ctx context.Context, o *fleetRunOptions) error {
	kc, err := collect.LoadKubeconfig(o.kubeconfig, o.context)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(kc.Config)
	if err != nil {
		return err
	}
	job, secret := fleetJob(o)
	if _, err := kube.CoreV1().Secrets(o.namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the index's Secret %s/%s: %w", o.namespace, o.name, err)
	}
	created, err := kube.BatchV1().Jobs(o.namespace).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create Job %s/%s: %w", o.namespace, o.name, err)
	}
	// The Secret goes with the Job.
	secret.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: created.Name, UID: created.UID}}
	if _, err := kube.CoreV1().Secrets(o.namespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		o.log().Warnf("the Secret %s/%s is not owned by the Job: delete it with the Job (%v)", o.namespace, o.name, err)
	}
	fmt.Fprintf(o.streams.ErrOut, "created Job %s/%s: %d shards, parallelism %d, backoffLimitPerIndex %d\n", o.namespace, o.name, o.shards, o.parallelism, o.backoffPerIdx)
	if !o.wait {
		_, err := fmt.Fprintf(o.streams.Out, "job.batch/%s\n", o.name)
		return err
	}
	var last *batchv1.Job
	werr := wait.PollUntilContextTimeout(ctx, 2*time.Second, o.timeout, true, func(ctx context.Context) (bool, error) {
		j, err := kube.BatchV1().Jobs(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			return false, nil // the API server may blink; the timeout bounds the wait
		}
		last = j
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if last == nil {
		return fmt.Errorf("follow Job %s/%s: %w", o.namespace, o.name, werr)
	}
	failed := ""
	if last.Status.FailedIndexes != nil {
		failed = *last.Status.FailedIndexes
	}
	fmt.Fprintf(o.streams.Out, "job %s: completed indexes %q, failed indexes %q, %d pod(s) succeeded, %d failed\n",
		o.name, last.Status.CompletedIndexes, failed, last.Status.Succeeded, last.Status.Failed)
	if werr != nil {
		return fmt.Errorf("follow Job %s/%s: %w", o.namespace, o.name, werr)
	}
	if failed != "" {
		return &codeError{code: exitError, err: errors.New("indexes " + strings.TrimSpace(failed) + " failed: see their pods' logs and the index's failed jobs")}
	}
	return nil
}
