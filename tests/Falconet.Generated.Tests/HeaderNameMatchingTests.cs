using System;
using System.Collections.Generic;
using System.Text;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>
/// The generated case-insensitive name matchers (the default schema's, and an app's set from app.headers.json),
/// exhaustively, against string.Equals(OrdinalIgnoreCase).
/// </summary>
public sealed class HeaderNameMatchingTests
{
    private const int MaxExhaustiveLetters = 12;
    private const int RandomCaseVariants = 4_000;
    private const int RandomInputs = 200_000;
    private const string TokenChars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    public static TheoryData<string> Collections => new() { "request", "response", "app request", "app response" };

    [Theory]
    [MemberData(nameof(Collections))]
    public void Every_case_variant_of_a_known_name_lands_in_its_typed_slot(string collection)
    {
        HeaderProbe probe = HeaderProbe.For(collection);
        var failures = new List<string>();
        int checkedVariants = 0;
        foreach (string name in probe.KnownNames)
        {
            foreach (byte[] variant in CaseVariants(name))
            {
                checkedVariants++;
                string? landed = probe.Classify(variant);
                if (landed != name)
                {
                    failures.Add(Encoding.ASCII.GetString(variant) + " -> " + (landed ?? "unknown"));
                }
            }
        }

        checkedVariants.ShouldBeGreaterThan(probe.KnownNames.Count * 4, "too few variants were checked: " + checkedVariants);
        failures.ShouldBeEmpty(Describe(failures));
    }

    [Theory]
    [MemberData(nameof(Collections))]
    public void Case_variants_of_names_known_only_to_the_other_collection_stay_unknown(string collection)
    {
        HeaderProbe probe = HeaderProbe.For(collection);
        var failures = new List<string>();
        int foreignNames = 0;
        foreach (string name in KnownSchema.AllHeaders)
        {
            if (probe.Reference(name) is not null)
            {
                continue;
            }

            foreignNames++;
            foreach (byte[] variant in CaseVariants(name))
            {
                string? landed = probe.Classify(variant);
                if (landed is not null)
                {
                    failures.Add(Encoding.ASCII.GetString(variant) + " -> " + landed + ", expected unknown");
                }
            }
        }

        foreignNames.ShouldBeGreaterThan(0, "every name of the schema is known to the " + collection + " collection");
        failures.ShouldBeEmpty(Describe(failures));
    }

    [Theory]
    [MemberData(nameof(Collections))]
    public void Changing_any_byte_of_a_known_name_to_any_value_matches_only_what_the_reference_matches(string collection)
    {
        HeaderProbe probe = HeaderProbe.For(collection);
        var failures = new List<string>();
        int caseVariants = 0;
        foreach (string name in KnownSchema.AllHeaders)
        {
            byte[] mutated = Encoding.ASCII.GetBytes(name);
            for (int position = 0; position < mutated.Length; position++)
            {
                byte original = mutated[position];
                for (int value = 0; value < 256; value++)
                {
                    mutated[position] = (byte)value;
                    string text = Encoding.Latin1.GetString(mutated);
                    string? expected = probe.Reference(text);
                    string? landed = probe.Classify(mutated);
                    if (landed != expected)
                    {
                        failures.Add(Escape(mutated) + " -> " + (landed ?? "unknown") + ", expected " + (expected ?? "unknown"));
                    }

                    if (expected is not null && value != original)
                    {
                        caseVariants++;
                    }
                }

                mutated[position] = original;
            }
        }

        // Only the other case of a letter may still match: the loop above must have seen those, or it proved nothing.
        caseVariants.ShouldBeGreaterThan(0, "no case variant was produced by the single-byte changes");
        failures.ShouldBeEmpty(Describe(failures));
    }

    [Theory]
    [MemberData(nameof(Collections))]
    public void Random_token_names_agree_with_the_ordinal_ignore_case_reference(string collection)
    {
        HeaderProbe probe = HeaderProbe.For(collection);
        var random = new Random(20_251_122);
        var failures = new List<string>();
        int matches = 0;
        byte[] buffer = new byte[40];
        for (int i = 0; i < RandomInputs; i++)
        {
            ReadOnlySpan<byte> name = i % 4 == 0 ? NearKnownName(random, buffer) : RandomToken(random, buffer);
            string text = Encoding.ASCII.GetString(name);
            string? expected = probe.Reference(text);
            string? landed = probe.Classify(name);
            if (landed != expected)
            {
                failures.Add(text + " -> " + (landed ?? "unknown") + ", expected " + (expected ?? "unknown"));
            }

            if (expected is not null)
            {
                matches++;
            }
        }

        // The near-known quarter must hit known names often, or the comparison only ever exercised the miss path.
        matches.ShouldBeGreaterThan(RandomInputs / 40, "only " + matches + " random names were known");
        failures.ShouldBeEmpty(Describe(failures));
    }

    private static IEnumerable<byte[]> CaseVariants(string name)
    {
        byte[] lower = Encoding.ASCII.GetBytes(name.ToLowerInvariant());
        var letters = new List<int>();
        for (int i = 0; i < lower.Length; i++)
        {
            if (lower[i] is >= (byte)'a' and <= (byte)'z')
            {
                letters.Add(i);
            }
        }

        if (letters.Count <= MaxExhaustiveLetters)
        {
            for (int mask = 0; mask < 1 << letters.Count; mask++)
            {
                yield return ApplyCase(lower, letters, mask);
            }
        }
        else
        {
            var random = new Random(name.Length * 7_919);
            for (int i = 0; i < RandomCaseVariants; i++)
            {
                yield return ApplyCase(lower, letters, random.NextInt64());
            }
        }
    }

    private static byte[] ApplyCase(byte[] lower, List<int> letters, long mask)
    {
        byte[] variant = (byte[])lower.Clone();
        for (int bit = 0; bit < letters.Count; bit++)
        {
            if ((mask & (1L << bit)) != 0)
            {
                variant[letters[bit]] &= 0xDF;
            }
        }

        return variant;
    }

    private static ReadOnlySpan<byte> RandomToken(Random random, byte[] buffer)
    {
        int length = random.Next(1, 41);
        for (int i = 0; i < length; i++)
        {
            buffer[i] = (byte)TokenChars[random.Next(TokenChars.Length)];
        }

        return buffer.AsSpan(0, length);
    }

    // A known name in random case, half of the time with one token byte replaced, inserted or removed.
    private static ReadOnlySpan<byte> NearKnownName(Random random, byte[] buffer)
    {
        string name = KnownSchema.AllHeaders[random.Next(KnownSchema.AllHeaders.Count)];
        int length = name.Length;
        for (int i = 0; i < length; i++)
        {
            char c = name[i];
            buffer[i] = (byte)(random.Next(2) == 0 ? char.ToLowerInvariant(c) : char.ToUpperInvariant(c));
        }

        if (random.Next(2) == 0)
        {
            int position = random.Next(length);
            byte token = (byte)TokenChars[random.Next(TokenChars.Length)];
            switch (random.Next(3))
            {
                case 0:
                    buffer[position] = token;
                    break;
                case 1 when length < buffer.Length:
                    Array.Copy(buffer, position, buffer, position + 1, length - position);
                    buffer[position] = token;
                    length++;
                    break;
                default:
                    if (length > 1)
                    {
                        Array.Copy(buffer, position + 1, buffer, position, length - position - 1);
                        length--;
                    }

                    break;
            }
        }

        return buffer.AsSpan(0, length);
    }

    private static string Escape(byte[] bytes)
    {
        var builder = new StringBuilder();
        foreach (byte b in bytes)
        {
            if (b is >= 0x21 and <= 0x7E)
            {
                builder.Append((char)b);
            }
            else
            {
                builder.Append("\\x").Append(b.ToString("X2", System.Globalization.CultureInfo.InvariantCulture));
            }
        }

        return builder.ToString();
    }

    private static string Describe(List<string> failures) =>
        failures.Count + " mismatches, first ones:\n" + string.Join("\n", failures.GetRange(0, Math.Min(20, failures.Count)));
}
