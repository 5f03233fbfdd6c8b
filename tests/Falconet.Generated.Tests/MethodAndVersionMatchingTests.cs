using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>KnownMethods.Match and KnownVersions.Match against plain, case-sensitive reference implementations.</summary>
public sealed class MethodAndVersionMatchingTests
{
    private const string TokenChars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private static readonly Dictionary<string, KnownMethod> s_methods = MethodsByName();

    [Fact]
    public void Match_returns_each_known_method_and_its_length_at_the_start_of_a_request_line()
    {
        foreach (string method in KnownSchema.Methods)
        {
            KnownMethod expected = s_methods[method];
            foreach (string line in new[] { method + " /", method + " ", method + " /plaintext HTTP/1.1\r\n", method + " * HTTP/1.1" })
            {
                KnownMethod actual = KnownMethods.Match(Encoding.ASCII.GetBytes(line), out int length);
                (actual == expected && length == method.Length).ShouldBeTrue($"'{line}' gave {actual}/{length}, expected {expected}/{method.Length}");
            }
        }
    }

    [Fact]
    public void Every_schema_method_has_an_enum_member_with_its_cached_name_and_bytes()
    {
        foreach (string method in KnownSchema.Methods)
        {
            KnownMethod member = s_methods[method];
            KnownMethods.GetName(member).ShouldBeSameAs(KnownMethods.GetName(member));
            Encoding.ASCII.GetString(KnownMethods.GetBytes(member)).ShouldBe(method);
        }

        KnownMethods.GetName(KnownMethod.None).ShouldBe(string.Empty);
        KnownMethods.GetName(KnownMethod.Custom).ShouldBe(string.Empty);
        KnownMethods.GetBytes(KnownMethod.Custom).IsEmpty.ShouldBeTrue();
    }

    [Fact]
    public void Case_variants_of_known_methods_are_custom_methods_of_the_same_length()
    {
        int variants = 0;
        foreach (string method in KnownSchema.Methods)
        {
            for (int mask = 1; mask < 1 << method.Length; mask++)
            {
                char[] chars = method.ToCharArray();
                for (int i = 0; i < chars.Length; i++)
                {
                    if ((mask & (1 << i)) != 0)
                    {
                        chars[i] = char.ToLowerInvariant(chars[i]);
                    }
                }

                string variant = new(chars);
                foreach (string line in new[] { variant + " /", variant + " /index.html HTTP/1.1" })
                {
                    variants++;
                    KnownMethod actual = KnownMethods.Match(Encoding.ASCII.GetBytes(line), out int length);
                    (actual == KnownMethod.Custom && length == method.Length).ShouldBeTrue($"'{line}' gave {actual}/{length}, expected Custom/{method.Length}");
                }
            }
        }

        variants.ShouldBeGreaterThan(100);
    }

    [Theory]
    [InlineData("GET ", KnownMethod.Get, 3)]
    [InlineData("GET", KnownMethod.None, 0)]
    [InlineData("", KnownMethod.None, 0)]
    [InlineData(" / HTTP/1.1", KnownMethod.None, 0)]
    [InlineData("GET\t/ HTTP/1.1", KnownMethod.None, 0)]
    [InlineData("GET/ HTTP/1.1", KnownMethod.None, 0)]
    [InlineData("PROPFIND /", KnownMethod.Custom, 8)]
    [InlineData("PROPFIND / HTTP/1.1", KnownMethod.Custom, 8)]
    [InlineData("VERSION-CONTROL /file HTTP/1.1", KnownMethod.Custom, 15)]
    [InlineData("OPTIONSX * HTTP/1.1", KnownMethod.Custom, 8)]
    [InlineData("GETS / HTTP/1.1", KnownMethod.Custom, 4)]
    [InlineData("GE /", KnownMethod.Custom, 2)]
    [InlineData("M-SEARCH * HTTP/1.1", KnownMethod.Custom, 8)]
    [InlineData("G(T / HTTP/1.1", KnownMethod.None, 0)]
    [InlineData("OPTIONS", KnownMethod.None, 0)]
    [InlineData("CONNECT", KnownMethod.None, 0)]
    [InlineData("OPTIONS ", KnownMethod.Options, 7)]
    [InlineData("DELETE ", KnownMethod.Delete, 6)]
    public void Match_handles_short_spans_long_tokens_and_non_tokens(string line, KnownMethod expected, int expectedLength)
    {
        KnownMethod actual = KnownMethods.Match(Encoding.ASCII.GetBytes(line), out int length);

        actual.ShouldBe(expected);
        length.ShouldBe(expectedLength);
    }

    [Fact]
    public void Changing_any_byte_of_a_request_line_start_to_any_value_agrees_with_the_reference()
    {
        var failures = new List<string>();
        foreach (string method in KnownSchema.Methods)
        {
            foreach (string line in new[] { method + " /plaintext HTTP/1.1", method + " /", method + " " })
            {
                byte[] bytes = Encoding.ASCII.GetBytes(line);
                for (int position = 0; position <= Math.Min(method.Length + 1, bytes.Length - 1); position++)
                {
                    byte original = bytes[position];
                    for (int value = 0; value < 256; value++)
                    {
                        bytes[position] = (byte)value;
                        CompareWithReference(bytes, failures);
                    }

                    bytes[position] = original;
                }
            }
        }

        failures.ShouldBeEmpty(Describe(failures));
    }

    [Fact]
    public void Every_prefix_of_a_request_line_agrees_with_the_reference()
    {
        var failures = new List<string>();
        foreach (string method in KnownSchema.Methods)
        {
            byte[] line = Encoding.ASCII.GetBytes(method + " /a HTTP/1.1");
            for (int length = 0; length <= line.Length; length++)
            {
                CompareWithReference(line.AsSpan(0, length), failures);
            }
        }

        failures.ShouldBeEmpty(Describe(failures));
    }

    [Fact]
    public void Random_request_line_starts_agree_with_the_reference()
    {
        var random = new Random(8_080);
        var failures = new List<string>();
        byte[] buffer = new byte[24];
        for (int i = 0; i < 100_000; i++)
        {
            int length = random.Next(0, buffer.Length + 1);
            for (int j = 0; j < length; j++)
            {
                // Mostly token bytes, with spaces and the odd arbitrary byte, so that every path of the matcher is taken.
                int pick = random.Next(20);
                buffer[j] = pick == 0 ? (byte)' ' : pick == 1 ? (byte)random.Next(256) : (byte)TokenChars[random.Next(TokenChars.Length)];
            }

            if (length > 0 && random.Next(3) == 0)
            {
                string method = KnownSchema.Methods[random.Next(KnownSchema.Methods.Count)];
                int copy = Math.Min(method.Length, length);
                Encoding.ASCII.GetBytes(method, 0, copy, buffer, 0);
                if (copy < length)
                {
                    buffer[copy] = (byte)' ';
                }
            }

            CompareWithReference(buffer.AsSpan(0, length), failures);
        }

        failures.ShouldBeEmpty(Describe(failures));
    }

    [Fact]
    public void Versions_match_exactly_the_first_eight_bytes()
    {
        KnownVersions.Match("HTTP/1.1"u8).ShouldBe(KnownVersion.Http11);
        KnownVersions.Match("HTTP/1.0"u8).ShouldBe(KnownVersion.Http10);
        KnownVersions.Match("HTTP/1.1\r\n"u8).ShouldBe(KnownVersion.Http11);
        KnownVersions.Match("http/1.1"u8).ShouldBe(KnownVersion.None);
        KnownVersions.Match("HTTP/2.0"u8).ShouldBe(KnownVersion.None);
        KnownVersions.GetName(KnownVersion.Http11).ShouldBe("HTTP/1.1");
        Encoding.ASCII.GetString(KnownVersions.GetBytes(KnownVersion.Http10)).ShouldBe("HTTP/1.0");
    }

    [Fact]
    public void Shorter_spans_than_a_version_never_match()
    {
        foreach (string version in KnownSchema.Versions)
        {
            byte[] bytes = Encoding.ASCII.GetBytes(version);
            for (int length = 0; length < bytes.Length; length++)
            {
                KnownVersions.Match(bytes.AsSpan(0, length)).ShouldBe(KnownVersion.None);
            }
        }
    }

    [Fact]
    public void Changing_any_byte_of_a_version_to_any_value_matches_only_the_exact_other_version()
    {
        var byName = new Dictionary<string, KnownVersion>(StringComparer.Ordinal);
        foreach (KnownVersion version in Enum.GetValues<KnownVersion>())
        {
            if (version != KnownVersion.None)
            {
                byName.Add(KnownVersions.GetName(version), version);
            }
        }

        byName.Count.ShouldBe(KnownSchema.Versions.Count);
        foreach (string version in KnownSchema.Versions)
        {
            KnownVersions.Match(Encoding.ASCII.GetBytes(version)).ShouldBe(byName[version]);
            byte[] bytes = Encoding.ASCII.GetBytes(version + "\r\n");
            for (int position = 0; position < version.Length; position++)
            {
                byte original = bytes[position];
                for (int value = 0; value < 256; value++)
                {
                    if (value == original)
                    {
                        continue;
                    }

                    bytes[position] = (byte)value;
                    KnownVersion expected = byName.GetValueOrDefault(Encoding.Latin1.GetString(bytes, 0, version.Length), KnownVersion.None);
                    KnownVersions.Match(bytes).ShouldBe(expected);
                }

                bytes[position] = original;
            }
        }
    }

    private static void CompareWithReference(ReadOnlySpan<byte> line, List<string> failures)
    {
        KnownMethod expected = Reference(line, out int expectedLength);
        KnownMethod actual = KnownMethods.Match(line, out int length);
        if (actual != expected || length != expectedLength)
        {
            failures.Add($"'{Encoding.Latin1.GetString(line)}' gave {actual}/{length}, expected {expected}/{expectedLength}");
        }
    }

    // RFC 9110: method = token, followed by SP; methods compare case-sensitively.
    private static KnownMethod Reference(ReadOnlySpan<byte> line, out int length)
    {
        int end = 0;
        while (end < line.Length && TokenChars.Contains((char)line[end], StringComparison.Ordinal))
        {
            end++;
        }

        if (end == 0 || end == line.Length || line[end] != (byte)' ')
        {
            length = 0;
            return KnownMethod.None;
        }

        length = end;
        return s_methods.TryGetValue(Encoding.ASCII.GetString(line.Slice(0, end)), out KnownMethod method) ? method : KnownMethod.Custom;
    }

    private static Dictionary<string, KnownMethod> MethodsByName()
    {
        var byName = new Dictionary<string, KnownMethod>(StringComparer.Ordinal);
        foreach (KnownMethod method in Enum.GetValues<KnownMethod>())
        {
            if (method is not KnownMethod.None and not KnownMethod.Custom)
            {
                byName.Add(KnownMethods.GetName(method), method);
            }
        }

        return byName;
    }

    private static string Describe(List<string> failures) =>
        failures.Count + " mismatches, first ones:\n" + string.Join("\n", failures.GetRange(0, Math.Min(20, failures.Count)));
}
