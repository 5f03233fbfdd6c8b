using System;
using Microsoft.Extensions.Primitives;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Proxy;

/// <summary>The forwarding headers' syntax: list entries from the right, nodes, and RFC 7239 elements.</summary>
public sealed class ForwardedValuesTests
{
    [Fact]
    public void List_entries_come_from_the_last_field_line_back_and_empty_ones_are_skipped()
    {
        var reader = new ForwardedListReader(new StringValues(["a, b", " , c,", "d \t"]));
        string seen = "";
        while (reader.TryReadPrevious(out ReadOnlySpan<char> entry, out bool malformed))
        {
            malformed.ShouldBeFalse();
            seen += entry.ToString() + "|";
        }

        seen.ShouldBe("d|c|b|a|");
    }

    [Fact]
    public void A_comma_inside_quotes_does_not_split()
    {
        var reader = new ForwardedListReader(new StringValues("1.2.3.4, for=\"a,b\""));
        reader.TryReadPrevious(out ReadOnlySpan<char> entry, out bool malformed).ShouldBeTrue();
        (entry.ToString(), malformed).ShouldBe(("for=\"a,b\"", false));
        reader.TryReadPrevious(out entry, out malformed).ShouldBeTrue();
        (entry.ToString(), malformed).ShouldBe(("1.2.3.4", false));
        reader.TryReadPrevious(out _, out _).ShouldBeFalse();
    }

    [Theory]
    [InlineData("1.2.3.4, for=\"x\\y\"")]
    [InlineData("1.2.3.4, for=\"open")]
    public void An_entry_with_a_backslash_or_an_open_quote_is_malformed(string value)
    {
        var reader = new ForwardedListReader(new StringValues(value));
        reader.TryReadPrevious(out _, out bool malformed).ShouldBeTrue();
        malformed.ShouldBeTrue();
    }

    [Theory]
    [InlineData("192.0.2.7", false, "192.0.2.7", 0, false)]
    [InlineData("192.0.2.7:4711", false, "192.0.2.7", 4711, false)]
    [InlineData("[2001:db8::7]", false, "2001:db8::7", 0, false)]
    [InlineData("[2001:db8::7]:65535", true, "2001:db8::7", 65535, false)]
    [InlineData("2001:db8::7", false, "2001:db8::7", 0, false)]
    [InlineData("::ffff:192.0.2.7", false, "::ffff:192.0.2.7", 0, false)]
    [InlineData("unknown", true, "", 0, true)]
    [InlineData("UNKNOWN:80", true, "", 80, true)]
    [InlineData("_gazonk", true, "", 0, true)]
    [InlineData("_hidden:_port", true, "", 0, true)]
    [InlineData("192.0.2.7:_port", true, "192.0.2.7", 0, false)]
    public void Valid_nodes_give_their_address_and_port(string node, bool rfc7239, string address, int port, bool unknown)
    {
        ForwardedValues.TryParseNode(node, rfc7239, out ReadOnlySpan<char> parsed, out int parsedPort, out bool isUnknown).ShouldBeTrue();
        (parsed.ToString(), parsedPort, isUnknown).ShouldBe((address, port, unknown));
    }

    [Theory]
    [InlineData("", false)]
    [InlineData("unknown", false)]
    [InlineData("_gazonk", false)]
    [InlineData("2001:db8::7", true)]
    [InlineData("127.1", false)]
    [InlineData("0x7f.0.0.1", false)]
    [InlineData("1.2.3.4.5", false)]
    [InlineData("1.2.3.", false)]
    [InlineData("256.0.0.1", false)]
    [InlineData("0127.0.0.1", false)]
    [InlineData("012.0.0.1", false)]
    [InlineData("1.2.3.4:", false)]
    [InlineData("1.2.3.4:65536", false)]
    [InlineData("1.2.3.4:123456", false)]
    [InlineData("1.2.3.4:-1", false)]
    [InlineData("1.2.3.4:_port", false)]
    [InlineData("1.2.3.4 ", false)]
    [InlineData("[2001:db8::7", false)]
    [InlineData("[2001:db8::7]4711", false)]
    [InlineData("[1.2.3.4]", false)]
    [InlineData("[fe80::1%eth0]", false)]
    [InlineData("_", true)]
    [InlineData("_a/b", true)]
    [InlineData("example.com", false)]
    public void Malformed_nodes_are_refused(string node, bool rfc7239)
        => ForwardedValues.TryParseNode(node, rfc7239, out _, out _, out _).ShouldBeFalse();

    [Fact]
    public void An_element_gives_for_proto_and_host_unquoted_and_ignores_by_and_extensions()
    {
        ForwardedValues.TryParseElement("for=\"[2001:db8::7]:80\";Proto=https; host=\"a.example:8443\";by=_x;ext=\"v\"",
            out ReadOnlySpan<char> node, out ReadOnlySpan<char> proto, out ReadOnlySpan<char> host).ShouldBeTrue();
        (node.ToString(), proto.ToString(), host.ToString()).ShouldBe(("[2001:db8::7]:80", "https", "a.example:8443"));
    }

    [Theory]
    [InlineData("for=1.2.3.4;for=5.6.7.8")]
    [InlineData("proto=http;PROTO=https")]
    [InlineData("for")]
    [InlineData("=1.2.3.4")]
    [InlineData("for=")]
    [InlineData("for=[::1]")]
    [InlineData("for=1.2.3.4:80")]
    [InlineData("for=\"1.2.3.4")]
    [InlineData("f(r=1.2.3.4")]
    [InlineData("for=\"a\"b\"")]
    public void Malformed_elements_are_refused(string element)
        => ForwardedValues.TryParseElement(element, out _, out _, out _).ShouldBeFalse();

    [Theory]
    [InlineData("https", "https")]
    [InlineData("HTTPS", "https")]
    [InlineData("Http", "http")]
    [InlineData("wss", null)]
    [InlineData("https ", null)]
    public void Only_http_and_https_are_schemes(string value, string? scheme)
        => ForwardedValues.ParseScheme(value).ShouldBe(scheme);
}
