"""Reshaping calls the question generator states (issue #32, point 2): pivot tables,
cross tabulations, shares from `value_counts(normalize=True)` and `agg` with several
functions. Each was `question.undescribed` before; the variants whose meaning the
phrase would not carry (a lambda, a dict on one column, extra options) still refuse."""

from __future__ import annotations

import ast

import pytest

from smoldataenvs.describe import Describer


def phrase(expression: str) -> str | None:
    table = ast.parse("pd.read_csv('x.csv')", mode="eval").body
    describer = Describer({"df": table}, {})
    return describer.phrase(ast.parse(expression, mode="eval").body)


DATA = "the data in `x.csv`"


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            "df['city'].value_counts(normalize=True)",
            "the share (fraction from 0 to 1) of each distinct value (largest share first) "
            f"of the `city` column of {DATA}",
        ),
        (  # pandas' own defaults: the plain counts
            "df['city'].value_counts(normalize=False, ascending=False)",
            f"the count of each distinct value (most common first) of the `city` column of {DATA}",
        ),
        (
            "df['city'].value_counts(ascending=True)",
            f"the count of each distinct value (least common first) of the `city` column of {DATA}",
        ),
        (
            "df['city'].value_counts(normalize=True, ascending=True)",
            "the share (fraction from 0 to 1) of each distinct value (smallest share first) "
            f"of the `city` column of {DATA}",
        ),
        (
            "df.groupby('city')['people'].agg(['mean', 'max'])",
            f"the mean and the largest value of the `people` column of {DATA}, for each "
            "'city' (groups in ascending order of 'city'; one column per function, named "
            "`mean`, `max`)",
        ),
        (
            "df['people'].agg(['min', np.max])",
            f"the smallest value and the largest value of the `people` column of {DATA} "
            "(one entry per function, labelled `min`, `max`)",
        ),
        (
            "df.groupby('city').agg({'people': 'sum', 'age': np.mean})",
            "the sum of the `people` column and the mean of the `age` column of "
            f"{DATA}, for each 'city' (groups in ascending order of 'city')",
        ),
        (
            "df.pivot_table(values='people', index='city', columns='year', aggfunc='sum')",
            f"the sum of the 'people' column of {DATA}, for each 'city' (rows) and each "
            "'year' (columns)",
        ),
        (
            "pd.pivot_table(df, values='people', index='city', fill_value=0)",
            f"the mean of the 'people' column of {DATA}, for each 'city' (rows), with 0 "
            "where a combination has no rows",
        ),
        (
            "pd.crosstab(df['city'], df['year'])",
            f"the number of rows of {DATA} for each combination of a value of `city` (rows) "
            "and a value of `year` (columns) (missing values not counted)",
        ),
        (
            "pd.crosstab(df.city, df.year, margins=True)",
            f"the number of rows of {DATA} for each combination of a value of `city` (rows) "
            "and a value of `year` (columns) (missing values not counted), with an `All` "
            "row and column of totals (the sum)",
        ),
        (
            "pd.crosstab(df['city'], df['year'], normalize='index')",
            f"the number of rows of {DATA} for each combination of a value of `city` (rows) "
            "and a value of `year` (columns) (missing values not counted), each as the "
            "share (fraction from 0 to 1) of its row's total",
        ),
        (
            "pd.crosstab(df.city, df.year, values=df.people, aggfunc=np.average)",
            f"the mean of `people` of {DATA} for each combination of a value of `city` "
            "(rows) and a value of `year` (columns) (missing values not counted)",
        ),
        (
            "pd.crosstab(index=df['city'], columns=df['year'])",
            f"the number of rows of {DATA} for each combination of a value of `city` (rows) "
            "and a value of `year` (columns) (missing values not counted)",
        ),
    ],
)
def test_reshaping_calls_are_stated(expression: str, expected: str) -> None:
    assert phrase(expression) == expected


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "expression",
    [
        "df['city'].value_counts(normalize=True, dropna=False)",
        "df['city'].value_counts(ascending=None)",
        "df['city'].value_counts(ascending=flag)",
        "df.pivot_table(values='people', index='city', aggfunc=lambda x: x.max())",
        "df.pivot_table(values='people', index='city', margins=True)",
        "df['people'].agg({'total': 'sum'})",
        "df.groupby('city')['people'].agg({'people': 'sum'})",
        "df['people'].agg(['mean', lambda x: x.max()])",
        "pd.crosstab(df['city'], df['year'], normalize='index', margins=True)",
        "pd.crosstab(df['city'], df['year'], values=df['people'])",  # no aggfunc
        "pd.crosstab(df['city'], df['year'], values=df['people'], aggfunc=lambda v: v.max())",
        "pd.crosstab(df['city'], df['year'], values=df['people'], aggfunc='sum', normalize=True)",
        "pd.crosstab(df['city'], df['year'], dropna=False)",
        "df.groupby('city')['year'].value_counts().unstack()",  # not keys named by a list
        "df.groupby(['city', 'year'])['people'].mean().unstack('month')",  # not a key
        "df.groupby(['city', 'year'])['people'].mean().unstack(fill_value='none')",
        "df.groupby(['city', 'year'])['people'].mean().unstack(2)",
        "df[['city', 'year']].unstack()",  # no grouped aggregate
        # the rows of a cross table or an unstacked aggregate: one key's distinct values
        "len(pd.crosstab(df.city, df.year, values=df.people, aggfunc='max'))",
        "len(df.groupby(['city', 'year'])['people'].mean().unstack())",
        "len(pd.pivot_table(df, index=['city', 'year'], values='people'))",  # and a pivot's
        "len(df.pivot_table(index='city', values='people').sort_values('people'))",
    ],
)
def test_reshaping_variants_the_phrase_would_not_carry_refuse(expression: str) -> None:
    assert phrase(expression) is None


GROUPED = "for each 'city', 'year' (groups in ascending order of 'city', 'year')"


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            "df.groupby(['city', 'year'])['people'].sum().unstack()",
            f"the sum of the `people` column of {DATA}, {GROUPED}, laid out as a table with "
            "one row per 'city' and one column per 'year' (a combination with no rows: missing)",
        ),
        (
            "df.groupby(['city', 'year']).size().unstack(level=0, fill_value=0)",
            f"the number of rows of {DATA}, {GROUPED}, laid out as a table with one row per "
            "'year' and one column per 'city' (a combination with no rows: 0)",
        ),
        (  # an A/B-testing notebook: a dict `agg` kept in a variable, one column unstacked
            "device['people'].unstack(level='year')",
            f"the number of non-missing values of the `people` column of {DATA}, {GROUPED}, "
            "laid out as a table with one row per 'city' and one column per 'year' (a "
            "combination with no rows: missing)",
        ),
    ],
)
def test_an_unstacked_grouped_aggregate_is_laid_out_as_stated(
    expression: str, expected: str
) -> None:
    table = ast.parse("pd.read_csv('x.csv')", mode="eval").body
    device = ast.parse(
        "df.groupby(['city', 'year']).agg({'people': 'count', 'x': 'sum'})", mode="eval"
    ).body
    describer = Describer({"df": table, "device": device}, {})
    assert describer.phrase(ast.parse(expression, mode="eval").body) == expected
    assert ("device" in describer.used) == expression.startswith("device")
