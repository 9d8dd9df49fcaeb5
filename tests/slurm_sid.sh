#!/usr/bin/env bash
# A Slurm that reads topology.yaml (Slurm 25.05 and later) for tests/test_slurm_yaml.py:
#   bash tests/slurm_sid.sh DIR
# Debian 12's slurmctld is 22.05, which reads topology.conf only; Debian unstable has a current
# Slurm, built against a newer glibc than Debian 12's. So Debian unstable's slurmctld and
# slurm-client, with every package they depend on (its glibc too), are fetched by apt in
# download-only mode with an apt state of their own under DIR (nothing is installed on the
# machine, its apt sources and lists are not touched) and unpacked into DIR/root, which the test
# enters with chroot. The archive is the Debian mirror the machine's own apt sources use.
set -euo pipefail
dir=$(realpath -m "$1")
if [ -n "$(ls -A "$dir" 2>/dev/null)" ] && [ ! -e "$dir/packages.txt" ]; then
  echo "slurm_sid.sh: $dir holds files this script did not make; give an empty or new directory" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/root"
: > "$dir/apt/status"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' | awk -v c="$codename" '$2 == c {print $1; exit}')
if [ -z "$mirror" ]; then
  echo "slurm_sid.sh: no Debian archive for $codename in the machine's apt sources (apt-get update first)" >&2
  exit 1
fi
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror unstable main" > "$dir/apt/sources.list"
apt=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
     -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o "Dir::State::status=$dir/apt/status"
     -o APT::Architecture=amd64 -o APT::Install-Recommends=false -o Debug::NoLocking=true)
apt-get "${apt[@]}" update -qq
apt-get "${apt[@]}" install -y -qq --download-only slurmctld slurm-client >/dev/null
for deb in "$dir"/apt/cache/archives/*.deb; do
  dpkg-deb -x "$deb" "$dir/root"
  dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >> "$dir/packages.txt"
done
rm -rf "$dir/apt"
cd "$dir/root"
for link in bin sbin lib lib64; do [ -e "$link" ] || ln -s "usr/$link" "$link"; done  # Debian's merged /usr
ln -sf slurmctld-wlm usr/sbin/slurmctld  # what update-alternatives would link
mkdir -p proc dev tmp
echo "root:x:0:0:root:/root:/bin/sh" > etc/passwd
echo "root:x:0:" > etc/group
echo "127.0.0.1 localhost" > etc/hosts
if [ "$(id -u)" = 0 ]; then
  chroot "$dir/root" /usr/sbin/slurmctld -V  # runs: its loader and libraries are all there
fi
