/*
 * fairseq dict.txt lookups.  See fsdict.h.
 *
 * The words stay in one copy of the file; an array of (word, id)
 * sorted by word, ties by id, answers lookups by binary search and
 * finds duplicates on loading.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsdict.h"

struct fsent {
	const char	*w;
	size_t		 len;
	uint64_t	 id;
	int		 overwrite;
};

struct fsdict {
	char		*text;
	struct fsent	*e;
	size_t		 n;
	uint64_t	 nsym;
};

static const char *const specials[4] = { "<s>", "<pad>", "</s>", "<unk>" };
static const char flag[] = "#fairseq:overwrite";

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Python's str.isspace() on ASCII. */
static int
pyspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* Python's int() on a decimal field: white space around, a sign, digits with single '_' between. */
static int
pyint(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	while (i < n && pyspace((unsigned char)s[i]))
		i++;
	while (n > i && pyspace((unsigned char)s[n - 1]))
		n--;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			digits++;
		else if (s[i] == '_' && digits > 0 && i + 1 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '9')
			continue;
		else
			return 0;
	}
	return digits > 0;
}

static const char *
last_space(const char *s, size_t n)
{
	while (n > 0)
		if (s[--n] == ' ')
			return s + n;
	return NULL;
}

static int
cmp_ent(const void *a, const void *b)
{
	const struct fsent *x = a, *y = b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->w, y->w, m);

	if (c != 0)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct fsdict *
fsdict_load_mem(const void *p, size_t n, const char *name, char *err,
    size_t errlen)
{
	struct fsdict *d;
	const char *s, *end, *eol;
	size_t lines = 0, k;
	uint64_t bad = UINT64_MAX;

	if ((d = calloc(1, sizeof *d)) == NULL ||
	    (d->text = malloc(n + 1)) == NULL) {
		seterr(err, errlen, "%s: %s", name, strerror(errno));
		free(d);
		return NULL;
	}
	if (n > 0)
		memcpy(d->text, p, n);
	d->text[n] = '\0';
	/* Lines end at \n, \r\n or \r, as Python's text files read them. */
	for (s = d->text, end = d->text + n; s < end; s = eol) {
		eol = s;
		while (eol < end && *eol != '\n' && *eol != '\r')
			eol++;
		lines++;
		if (eol < end && *eol == '\r' && eol + 1 < end && eol[1] == '\n')
			eol++;
		if (eol < end)
			eol++;
	}
	if ((d->e = calloc(lines + 4, sizeof *d->e)) == NULL) {
		seterr(err, errlen, "%s: %s", name, strerror(errno));
		fsdict_free(d);
		return NULL;
	}
	for (k = 0; k < 4; k++) {
		d->e[k].w = specials[k];
		d->e[k].len = strlen(specials[k]);
		d->e[k].id = k;
	}
	d->n = 4;
	for (s = d->text; s < end; s = eol) {
		size_t len, next;
		const char *sp, *sp2;
		struct fsent *e = &d->e[d->n];

		eol = s;
		while (eol < end && *eol != '\n' && *eol != '\r')
			eol++;
		len = (size_t)(eol - s);
		next = eol < end && *eol == '\r' && eol + 1 < end &&
		    eol[1] == '\n' ? 2 : eol < end;
		while (len > 0 && pyspace((unsigned char)s[len - 1]))
			len--;
		e->id = d->n;
		if ((sp = last_space(s, len)) == NULL)
			goto badline;
		if ((size_t)(s + len - sp - 1) == sizeof flag - 1 &&
		    memcmp(sp + 1, flag, sizeof flag - 1) == 0) {
			e->overwrite = 1;
			if ((sp2 = last_space(s, (size_t)(sp - s))) == NULL)
				goto badline;
			if (!pyint(sp2 + 1, (size_t)(sp - sp2 - 1)))
				goto badline;
			sp = sp2;
		} else if (!pyint(sp + 1, (size_t)(s + len - sp - 1)))
			goto badline;
		e->w = s;
		e->len = (size_t)(sp - s);
		d->n++;
		eol += next;
		continue;
badline:
		seterr(err, errlen, "%s: line %zu: incorrect dictionary format, "
		    "expected '<token> <cnt> [flags]'", name, d->n - 4 + 1);
		fsdict_free(d);
		return NULL;
	}
	d->nsym = d->n;
	qsort(d->e, d->n, sizeof *d->e, cmp_ent);
	/* A repeated word must say it overwrites; report the first line that does not. */
	for (k = 1; k < d->n; k++)
		if (d->e[k].len == d->e[k - 1].len &&
		    memcmp(d->e[k].w, d->e[k - 1].w, d->e[k].len) == 0 &&
		    !d->e[k].overwrite && d->e[k].id < bad)
			bad = d->e[k].id;
	if (bad != UINT64_MAX) {
		for (k = 0; d->e[k].id != bad; k++)
			;
		seterr(err, errlen, "%s: line %ju: duplicate word '%.*s' "
		    "(add #fairseq:overwrite to replace it)", name,
		    (uintmax_t)(bad - 4 + 1),
		    d->e[k].len > 60 ? 60 : (int)d->e[k].len, d->e[k].w);
		fsdict_free(d);
		return NULL;
	}
	return d;
}

struct fsdict *
fsdict_load(const char *path, char *err, size_t errlen)
{
	struct fsdict *d = NULL;
	struct stat st;
	char *p = NULL;
	ssize_t r;
	size_t off = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size >= SIZE_MAX / 2) {
		seterr(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((p = malloc((size_t)st.st_size + 1)) == NULL) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	while (off < (size_t)st.st_size) {
		r = read(fd, p + off, (size_t)st.st_size - off);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			seterr(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		off += (size_t)r;
	}
	d = fsdict_load_mem(p, off, path, err, errlen);
out:
	free(p);
	if (fd != -1)
		close(fd);
	return d;
}

void
fsdict_free(struct fsdict *d)
{
	if (d == NULL)
		return;
	free(d->e);
	free(d->text);
	free(d);
}

int64_t
fsdict_lookup(const struct fsdict *d, const char *word, size_t len)
{
	size_t lo = 0, hi = d->n;
	struct fsent key = { word, len, UINT64_MAX, 0 };

	/* The last entry not above (word, UINT64_MAX): the newest id of the word. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_ent(&d->e[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	if (d->e[lo].len != len || memcmp(d->e[lo].w, word, len) != 0)
		return -1;
	return (int64_t)d->e[lo].id;
}

uint64_t
fsdict_size(const struct fsdict *d)
{
	return d->nsym;
}
