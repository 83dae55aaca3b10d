/* harness.c prints cronie's answers for testdata/cronie/table.txt.
 *
 * It compiles cronie's own field parser (get_list, get_range, get_number,
 * set_element from src/entry.c, extracted verbatim by gen.sh) and applies
 * load_entry's star flags and Sunday rule (src/entry.c: "if (ch == '*')
 * e->flags |= DOM_STAR" before the day-of-month and day-of-week fields;
 * "make sundays equivalent") and cron.c's match rule (find_jobs: minute,
 * hour and month must match; the days must both match when DOM_STAR or
 * DOW_STAR is set, either one otherwise). It then walks the minutes from
 * 2026-01-01T00:00Z (UTC) and prints the first firing minutes.
 *
 * Input: one five-field expression per line on stdin. Output: the
 * expression, a tab, then "error" or up to NFIRE times (RFC 3339, UTC)
 * separated by spaces.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bitstring.h"

#define OK 0
#define TRUE 1
#define FALSE 0
#define MAX_TEMPSTR 131072
#define PPC_NULL ((const char **)NULL)
#define FIRST_MINUTE 0
#define LAST_MINUTE 59
#define FIRST_HOUR 0
#define LAST_HOUR 23
#define FIRST_DOM 1
#define LAST_DOM 31
#define FIRST_MONTH 1
#define LAST_MONTH 12
#define FIRST_DOW 0
#define LAST_DOW 7
#define Debug(mask, message)
/* src/macros.h */
#define	Skip_Blanks(c, f) \
			while (c == '\t' || c == ' ') \
				c = get_char(f);
#define	Skip_Nonblanks(c, f) \
			while (c!='\t' && c!=' ' && c!='\n' && c != EOF) \
				c = get_char(f);

/* src/globals.h */
static const char *MonthNames[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec", NULL};
static const char *DowNames[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", NULL};

/* src/misc.c, without line counting */
static int get_char(FILE *file) { return getc(file); }
static void unget_char(int ch, FILE *file) { ungetc(ch, file); }

#include "entry_extract.c"

#define NFIRE 6
#define YEARS 30

struct entry {
	bitstr_t bit_decl(minute, 60);
	bitstr_t bit_decl(hour, 24);
	bitstr_t bit_decl(dom, 31);
	bitstr_t bit_decl(month, 12);
	bitstr_t bit_decl(dow, 8);
	int dom_star, dow_star;
};

/* parse is load_entry's numeric branch for one line (src/entry.c). */
static int parse(const char *line, struct entry *e) {
	char buf[512];
	snprintf(buf, sizeof buf, "%s cmd\n", line);
	FILE *f = fmemopen(buf, strlen(buf), "r");
	int ch = get_char(f);
	Skip_Blanks(ch, f)
	ch = get_list(e->minute, FIRST_MINUTE, LAST_MINUTE, PPC_NULL, ch, f);
	if (ch != EOF)
		ch = get_list(e->hour, FIRST_HOUR, LAST_HOUR, PPC_NULL, ch, f);
	if (ch != EOF) {
		e->dom_star = ch == '*';
		ch = get_list(e->dom, FIRST_DOM, LAST_DOM, PPC_NULL, ch, f);
	}
	if (ch != EOF)
		ch = get_list(e->month, FIRST_MONTH, LAST_MONTH, MonthNames, ch, f);
	if (ch != EOF) {
		e->dow_star = ch == '*';
		ch = get_list(e->dow, FIRST_DOW, LAST_DOW, DowNames, ch, f);
	}
	fclose(f);
	if (ch == EOF || ch == '\n' || ch == '*')
		return -1;
	if (bit_test(e->dow, 0) || bit_test(e->dow, 7)) {
		bit_set(e->dow, 0);
		bit_set(e->dow, 7);
	}
	return 0;
}

/* matches is find_jobs' test (src/cron.c). */
static int matches(const struct entry *e, const struct tm *tm) {
	int minute = tm->tm_min - FIRST_MINUTE, hour = tm->tm_hour - FIRST_HOUR;
	int dom = tm->tm_mday - FIRST_DOM, month = tm->tm_mon + 1 - FIRST_MONTH;
	int dow = tm->tm_wday - FIRST_DOW;
	return bit_test(e->minute, minute) && bit_test(e->hour, hour) &&
		bit_test(e->month, month) &&
		((e->dom_star || e->dow_star)
			? (bit_test(e->dow, dow) && bit_test(e->dom, dom))
			: (bit_test(e->dow, dow) || bit_test(e->dom, dom)));
}

int main(void) {
	char line[512];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == 0 || line[0] == '#')
			continue;
		struct entry e;
		memset(&e, 0, sizeof e);
		printf("%s\t", line);
		if (parse(line, &e) != 0) {
			printf("error\n");
			continue;
		}
		struct tm start = {.tm_year = 126, .tm_mon = 0, .tm_mday = 1};
		time_t t = timegm(&start), end = t + (time_t)YEARS * 366 * 86400;
		int n = 0;
		for (; t < end && n < NFIRE; t += 60) {
			struct tm tm;
			gmtime_r(&t, &tm);
			if (matches(&e, &tm)) {
				char out[32];
				strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
				printf("%s%s", n ? " " : "", out);
				n++;
			}
		}
		if (n == 0)
			printf("never");
		printf("\n");
	}
	return 0;
}
