"""Session files (.dfx): a whole project (library, engine choices and settings, every run) as JSON, gzip-compressed.

Reading checks the structure (JSON schema), then the meaning (workload and target readers, each
engine's settings schema, each stored result against its engine's result type), and builds a complete
Project before anything else sees it: a bad file is refused with the path of the wrong field and the
caller's open project is never touched. Writing is atomic and keeps the previous file as `.bak`.
docs/project-model.md describes the current version.

One module per job; this package's names are the ones callers use:
- schema: the format's name and its JSON schema;
- migrations: one function per format step, bringing older documents forward (MIGRATIONS, VERSION);
- document: the document to and from the project model (to_json, from_json), in checking phases;
- storage: the bytes on disk (encode, decode, atomic save with file versions, load);
- validate: `session validate` (check_file), the loader's phases with the runs checked in parallel.
"""

from core.session.document import from_json, to_json
from core.session.migrations import MIGRATIONS, VERSION, migrate_v1, migrate_v2, migrate_v3, migrate_v4
from core.session.schema import FORMAT
from core.session.storage import (GZIP_LEVEL, GZIP_MAGIC, MAX_UNCOMPRESSED, SUFFIX, UNCHECKED, SessionChanged, decode,
                                  decode_raw, encode, encode_text, file_stamp, load, load_stamped, read_document,
                                  save, stamp)
from core.session.validate import PARALLEL_MIN_CHARS, Summary, check_file

__all__ = ["FORMAT", "GZIP_LEVEL", "GZIP_MAGIC", "MAX_UNCOMPRESSED", "MIGRATIONS", "PARALLEL_MIN_CHARS", "SUFFIX",
           "UNCHECKED", "VERSION", "SessionChanged", "Summary", "check_file", "decode", "decode_raw", "encode",
           "encode_text", "file_stamp", "from_json", "load", "load_stamped", "migrate_v1", "migrate_v2", "migrate_v3",
           "migrate_v4", "read_document", "save", "stamp", "to_json"]
