// Wrong answers to exercise 04.6 (attn::unit_factor, code/src/unit_factor.cpp): mistakes a
// student plausibly makes, each of which the exercise's tests must reject (./book validate
// builds every one; docs/instructors.md says how to add one). The instructor's copy only:
// the release leaves this file out, no build compiles it as it stands.
//
// Each block `// WRONG ANSWER 04.6 name: what is wrong` ... `// END WRONG ANSWER` replaces the
// body of the solution region.

// WRONG ANSWER 04.6 volt-ignored: the ampere prefix to its power only; the volt part is left out
return std::pow(ampere_unit, ampere_exponent);
// END WRONG ANSWER

// WRONG ANSWER 04.6 volt-inverted: the volt prefix to minus its exponent (the direction of in_units)
return std::pow(ampere_unit, ampere_exponent) * std::pow(volt_unit, -volt_exponent);
// END WRONG ANSWER

// WRONG ANSWER 04.6 both-inverted: each prefix to minus its exponent, so from_units and in_units swap
return std::pow(ampere_unit, -ampere_exponent) * std::pow(volt_unit, -volt_exponent);
// END WRONG ANSWER

// WRONG ANSWER 04.6 exponents-ignored: the product of the prefixes, each to the power 1
return ampere_unit * volt_unit;
// END WRONG ANSWER

// WRONG ANSWER 04.6 sum-of-powers: adds the two powers instead of multiplying them
return std::pow(ampere_unit, ampere_exponent) + std::pow(volt_unit, volt_exponent);
// END WRONG ANSWER

// WRONG ANSWER 04.6 units-swapped: raises the volt prefix to the ampere exponent and the ampere prefix to the volt exponent
return std::pow(volt_unit, ampere_exponent) * std::pow(ampere_unit, volt_exponent);
// END WRONG ANSWER

// WRONG ANSWER 04.6 exponent-times-prefix: multiplies each prefix by its exponent instead of raising it to it
return (ampere_exponent == 0 ? 1.0 : ampere_exponent * ampere_unit) *
       (volt_exponent == 0 ? 1.0 : volt_exponent * volt_unit);
// END WRONG ANSWER

// WRONG ANSWER 04.6 ampere-ignored: the volt prefix to its power only; the ampere part is left out
return std::pow(volt_unit, volt_exponent);
// END WRONG ANSWER

// WRONG ANSWER 04.6 powers-apart: each prefix to its power, then the product: right in range, but (1e-200)^3 (1e200)^3 is 0 * inf = NaN
return std::pow(ampere_unit, ampere_exponent) * std::pow(volt_unit, volt_exponent);
// END WRONG ANSWER
