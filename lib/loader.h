/*
 * nnmaker-style batch loaders over TFRecord datasets: datasets (a
 * directory or a list of files, with a manifest), the loader
 * configuration (nnmaker's loader arguments plus "type"), and the three
 * loaders -- independent, continuous_sequence, discrete_sequence --
 * with tf.data's bounded shuffle buffer, epochs, padding and batching,
 * seeded and deterministic.  Batches are written as JSON or as one
 * Example each.  Nothing here prints or exits; every fault comes back
 * as one line naming the file, record and offset, or the config key
 * path.
 */
#ifndef RECPIPE_LOADER_H
#define RECPIPE_LOADER_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "manifest.h"

/*
 * A dataset: its manifest and data files.  "dir": every file whose name
 * ends in ".tfrecords" (in any case, as nnmaker) under data_dir,
 * recursively, in sorted full-path order, and data_dir/__manifest__.json;
 * "list": manifest_file and the non-empty lines of list_file (spaces
 * around them removed).  Relative paths are taken from the current
 * directory.
 */
struct ld_dataset {
	struct manifest	 mf;
	char		*manifest_path;
	size_t		 nfiles;
	char		**files;
};

/*
 * Read the dataset described by 'spec', a JSON object (json_t *) of
 * nnmaker's form {"type": "dir"|"list", "args": {...}}; 'path' is the
 * key path to name in messages ("dataset").  Returns 0, or -1 with the
 * fault in err.  Free with ld_dataset_free().
 */
int		 ld_dataset_json(struct ld_dataset *d, const void *spec,
		    const char *path, char *err, size_t errlen);
/*
 * A dataset named on a command line: a directory (a "dir" dataset), a
 * manifest file (no data files), a JSON dataset object or a loader
 * configuration (its "dataset").
 */
int		 ld_dataset_path(struct ld_dataset *d, const char *path,
		    char *err, size_t errlen);
void		 ld_dataset_free(struct ld_dataset *d);
/* Read a whole file (NUL-terminated) into *text; 0, or -1 with errno. */
int		 ld_read_file(const char *path, char **text, size_t *n);

enum ld_type { LD_INDEPENDENT, LD_CONTINUOUS, LD_DISCRETE };

struct ld_config;		/* opaque: a checked configuration */
struct loader;			/* opaque: a running loader */

/*
 * Parse and check a loader configuration (comments allowed, as in
 * manifests).  Everything that does not need the dataset is checked
 * here; 'dataset' is kept for ld_open().  Returns NULL with the fault
 * in err ("processing_steps[2].args.slice: ...").
 */
struct ld_config *ld_config_parse(const char *text, size_t n, char *err,
		    size_t errlen);
void		 ld_config_free(struct ld_config *c);
enum ld_type	 ld_config_type(const struct ld_config *c);
/*
 * The most bytes one tensor of a batch may take (4 a float32 value, 8
 * any other; default 2 GiB), and the examples of a batch held at once:
 * a configuration that would make more is refused by ld_config_bind()
 * (and ld_open()) naming the key and the size, data that makes more is
 * an error of ld_next() before the allocation.  Set before binding.
 */
void		 ld_config_set_max_bytes(struct ld_config *c, uint64_t n);
/* The "dataset" object (json_t *) of the configuration. */
const void	*ld_config_dataset(const struct ld_config *c);
/*
 * Check the configuration against a manifest: primary features exist
 * and suit the loader, tensors referenced exist, processing steps and
 * padding fit the shapes and dtypes.  0, or -1 with err set.  ld_open()
 * does this too.
 */
int		 ld_config_bind(struct ld_config *c, const struct manifest *m,
		    char *err, size_t errlen);

/*
 * Start a loader over dataset d (which must outlive it) with seed.
 * Returns NULL with err set.
 */
struct loader	*ld_open(struct ld_config *c, const struct ld_dataset *d,
		    uint64_t seed, char *err, size_t errlen);
void		 ld_close(struct loader *l);
/*
 * The largest record payload read where the bytes left cannot be known
 * (compressed files); 0, the default, is the reader's (2 GiB).
 */
void		 ld_set_max_record(struct loader *l, uint64_t max_len);

/*
 * The next batch: 1, 0 at the end (never with epochs null), or -1 with
 * the fault in err ("data/a.tfrecords: record 7: offset 1234: feature
 * 'x': ...").  The batch is then ready for ld_write_json() or
 * ld_write_example().
 */
int		 ld_next(struct loader *l, char *err, size_t errlen);
/* Append the current batch as one JSON object and a newline. */
int		 ld_write_json(struct loader *l, struct buf *out);
/* Append the current batch as a serialized Example. */
int		 ld_write_example(struct loader *l, struct buf *out);
/*
 * The same Example in pieces, for a writer that gathers them
 * (rec_writev()): its bytes are those of (*iov)[0..*n) in order, which
 * point into out (emptied first) and into the batch's own float32
 * values and padding, valid until the next ld_next(); *crc is their
 * crc32c_value(), mostly joined from CRCs the loader took as it made the
 * examples, so that the values need not be read again.
 */
int		 ld_write_example_iov(struct loader *l, struct buf *out,
		    const struct iovec **iov, size_t *n, uint32_t *crc);

struct ld_stats {
	uint64_t	 batches;
	uint64_t	 examples;
	uint64_t	 epochs;	/* completed */
	uint64_t	 records;	/* read */
	size_t		 ntensors;
};
void		 ld_get_stats(const struct loader *l, struct ld_stats *s);
/* Tensor i: its name and the share of padded values written (0..1). */
const char	*ld_tensor_name(const struct loader *l, size_t i);
double		 ld_tensor_padding(const struct loader *l, size_t i);

#endif
