using System;
using System.Buffers;
using System.Text;
using Falconet.Http.Http1;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>The chunk headers of a chunked response body.</summary>
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
