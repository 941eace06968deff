# Sourced by the load scripts: apt_need CMD=PACKAGE... installs from
# Debian's apt each package whose command is missing (as root, or with
# sudo -n).
apt_need() {
	local want=() pair
	for pair in "$@"; do
		command -v "${pair%%=*}" >/dev/null 2>&1 || want+=("${pair#*=}")
	done
	((${#want[@]})) || return 0
	echo "installing ${want[*]} from apt"
	local sudo=""
	[[ $EUID -eq 0 ]] || sudo="sudo -n"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
}
