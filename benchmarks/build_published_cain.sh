#!/usr/bin/env bash
# Build the published Cain tool (github ed741/cain) outside the project, for
# benchmarks/cain_vs_published.py. It is a peer, never a dependency: nothing here is committed.
#
#   benchmarks/build_published_cain.sh DEST
#
# Sources: $CAIN_GIT and $JSON_GIT may name local git directories (bare or not) of ed741/cain and
# stleary/JSON-java; otherwise both are cloned from GitHub. Needs javac (Java 17 here), git, and
# Debian's libreflections-java (installed with apt-get when missing and we are root).
# Result: DEST/cain.classpath (one line: the classpath), DEST/cain-commit (the tool's commit), and
# DEST/run-cain CONFIG.json (runs uk.co.edstow.cain.Main on a config). The benchmark takes DEST.
set -euo pipefail

DEST=${1:?usage: $0 DEST}
JSON_TAG=20230227                                  # the org.json version the tool's pom.xml pins
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)

gitdir() { (cd "$1" && cd "$(git rev-parse --git-dir)" && pwd); }

# 1. Reflections 0.10 and its dependencies (Debian packages).
if [ ! -f /usr/share/java/reflections.jar ]; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y libreflections-java; else
    echo "need /usr/share/java/reflections.jar: apt-get install libreflections-java (as root)" >&2; exit 1; fi
fi
JARS=/usr/share/java/reflections.jar
for pkg in $(apt-cache depends libreflections-java | awk '/Depends:/{print $2}'); do
  case $pkg in
    libslf4j-java) JARS=$JARS:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar ;;  # one binding, silent
    *) for j in $(dpkg -L "$pkg" | grep -E '^/usr/share/java/[^/]*\.jar$' | grep -Ev -- '-[0-9][^/]*\.jar$'); do
         JARS=$JARS:$j; done ;;
  esac
done

# 2. Sources: the tool at its newest commit, org.json at its pinned tag (else the nearest older tag).
if [ -z "${CAIN_GIT:-}" ]; then git clone --quiet https://github.com/ed741/cain.git "$DEST/cain.git"; CAIN_GIT=$DEST/cain.git; fi
if [ -z "${JSON_GIT:-}" ]; then git clone --quiet https://github.com/stleary/JSON-java.git "$DEST/json.git"; JSON_GIT=$DEST/json.git; fi
CAIN_GIT=$(gitdir "$CAIN_GIT"); JSON_GIT=$(gitdir "$JSON_GIT")
TAG=$(git --git-dir="$JSON_GIT" tag --list '2*' | sort | awk -v t=$JSON_TAG '$1 <= t' | tail -1)
[ -n "$TAG" ] || { echo "no org.json tag at or before $JSON_TAG in $JSON_GIT" >&2; exit 1; }
rm -rf "$DEST/src" "$DEST/json-src" "$DEST/classes" "$DEST/json-classes"
mkdir -p "$DEST/src" "$DEST/json-src" "$DEST/classes" "$DEST/json-classes"
git --git-dir="$CAIN_GIT" archive HEAD | tar -x -C "$DEST/src"
git --git-dir="$CAIN_GIT" rev-parse HEAD > "$DEST/cain-commit"
git --git-dir="$JSON_GIT" archive "$TAG" | tar -x -C "$DEST/json-src"
echo "$TAG" > "$DEST/json-tag"

# 3. org.json.
( cd "$DEST/json-src" && javac -nowarn -encoding UTF-8 -d "$DEST/json-classes" $(find src/main/java -name '*.java') )

# 4. The one change for reflections 0.10: MethodAnnotationsScanner is gone; constructors are
#    scanned by Scanners.ConstructorsAnnotated.
FR=$DEST/src/src/main/java/uk/co/edstow/cain/fileRun/FileRun.java
sed -i 's/new org\.reflections\.scanners\.MethodAnnotationsScanner()/Scanners.ConstructorsAnnotated/' "$FR"
sed -i 's/^import org\.reflections\.Reflections;/import org.reflections.Reflections;\nimport org.reflections.scanners.Scanners;/' "$FR"
grep -q 'Scanners.ConstructorsAnnotated' "$FR" || { echo "FileRun.java: the reflections change did not apply" >&2; exit 1; }

# 5. The tool.
CP=$DEST/json-classes:$JARS
( cd "$DEST/src" && javac -nowarn -encoding UTF-8 -cp "$CP" -d "$DEST/classes" $(find src/main/java -name '*.java') )
echo "$DEST/classes:$CP" > "$DEST/cain.classpath"
cat > "$DEST/run-cain" <<EOF
#!/bin/sh
exec java -cp "$DEST/classes:$CP" uk.co.edstow.cain.Main "\$@"
EOF
chmod +x "$DEST/run-cain"
echo "built Cain $(cut -c1-12 "$DEST/cain-commit") with org.json $TAG in $DEST"
echo "run: $DEST/run-cain CONFIG.json   (benchmark: --published $DEST)"
