using System;
using System.Buffers;
using System.Globalization;
using System.Text;
using Falconet.Http.Http1;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Http.Tests;

public sealed class StatusLineTests
{
    [Theory]
    [InlineData(200, "HTTP/1.1 200 OK")]
    [InlineData(404, "HTTP/1.1 404 Not Found")]
    [InlineData(413, "HTTP/1.1 413 Content Too Large")]
    [InlineData(431, "HTTP/1.1 431 Request Header Fields Too Large")]
    [InlineData(505, "HTTP/1.1 505 HTTP Version Not Supported")]
    [InlineData(299, "HTTP/1.1 299 ")]
    public void Get_returns_the_precomputed_status_line(int code, string expected)
        => Encoding.ASCII.GetString(HttpStatusLines.Get(code)).ShouldBe(expected);

    [Theory]
    [InlineData(99)]
    [InlineData(600)]
    public void Get_throws_when_the_code_is_outside_100_to_599(int code)
        => Should.Throw<ArgumentOutOfRangeException>(() => HttpStatusLines.Get(code).Length);

    [Fact]
    public void Get_returns_the_same_bytes_every_time()
        => (HttpStatusLines.Get(200) == HttpStatusLines.Get(200)).ShouldBeTrue();
}

public sealed class ChunkedResponseEncoderTests
{
    [Theory]
    [InlineData(1, "1\r\n")]
    [InlineData(15, "f\r\n")]
    [InlineData(16, "10\r\n")]
    [InlineData(4096, "1000\r\n")]
    [InlineData(0x7fffffffL, "7fffffff\r\n")]
    public void Chunk_header_is_lowercase_hex_and_crlf(long length, string expected)
    {
        var writer = new ArrayBufferWriter<byte>();
        ChunkedResponseEncoder.WriteChunkHeader(writer, length);
        Encoding.ASCII.GetString(writer.WrittenSpan).ShouldBe(expected);
    }

    [Fact]
    public void Chunk_header_rejects_an_empty_chunk()
        => Should.Throw<ArgumentOutOfRangeException>(() => ChunkedResponseEncoder.FormatChunkHeader(new byte[18], 0));
}

public sealed class ConnectionTokenTests
{
    [Theory]
    [InlineData("close", true)]
    [InlineData("Close", true)]
    [InlineData("keep-alive, close", true)]
    [InlineData("  close  ", true)]
    [InlineData("closed", false)]
    [InlineData("keep-alive", false)]
    [InlineData("", false)]
    public void Close_token_is_found_case_insensitively_in_a_list(string value, bool expected)
        => HttpConnectionTokens.ContainsClose(new StringValues(value)).ShouldBe(expected);

    [Fact]
    public void Tokens_are_found_in_any_of_several_values()
        => HttpConnectionTokens.ContainsKeepAlive(new StringValues(new[] { "upgrade", "Keep-Alive" })).ShouldBeTrue();
}

public sealed class DateHeaderValuesTests
{
    [Fact]
    public void Value_is_the_current_time_in_rfc1123_format_and_the_bytes_match()
    {
        DateHeaderValues.Acquire();
        try
        {
            string text = DateHeaderValues.Text;
            text.Length.ShouldBe(29);
            text.ShouldEndWith(" GMT");
            DateTimeOffset parsed = DateTimeOffset.ParseExact(text, "r", CultureInfo.InvariantCulture);
            (DateTimeOffset.UtcNow - parsed).ShouldBeLessThan(TimeSpan.FromSeconds(5));
            Encoding.ASCII.GetString(DateHeaderValues.Bytes).ShouldBe(text);
        }
        finally
        {
            DateHeaderValues.Release();
        }
    }
}
