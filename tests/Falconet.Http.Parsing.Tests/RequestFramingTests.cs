using System.Text;

namespace Falconet.Http.Parsing.Tests;

/// <summary>RequestFraming.Determine on header sets filled the way the connection fills them.</summary>
public sealed class RequestFramingTests
{
    [Fact]
    public void Determine_returns_None_without_framing_headers()
    {
        Assert.Equal(RequestBodyKind.None, RequestFraming.Determine(Headers(), KnownVersion.Http11, HttpLimits.Default, out long length));
        Assert.Equal(0, length);
    }

    [Fact]
    public void Determine_returns_the_declared_Content_Length()
    {
        RequestHeaders headers = Headers(("Content-Length", "42"));

        Assert.Equal(RequestBodyKind.ContentLength, RequestFraming.Determine(headers, KnownVersion.Http10, HttpLimits.Default, out long length));
        Assert.Equal(42, length);
    }

    [Fact]
    public void Determine_accepts_a_Content_Length_of_exactly_the_body_limit_and_answers_413_above()
    {
        var limits = new HttpLimits { MaxRequestBodySize = 100 };

        Assert.Equal(RequestBodyKind.ContentLength, RequestFraming.Determine(Headers(("Content-Length", "100")), KnownVersion.Http11, limits, out _));
        Assert.Equal(RequestRejectionReason.BodyTooLarge, Reason(Headers(("Content-Length", "101")), KnownVersion.Http11, limits));
    }

    [Fact]
    public void Determine_returns_Chunked_for_a_list_ending_in_chunked_across_lines()
    {
        RequestHeaders headers = Headers(("Transfer-Encoding", " , "), ("Transfer-Encoding", "Chunked"));

        Assert.Equal(RequestBodyKind.Chunked, RequestFraming.Determine(headers, KnownVersion.Http11, HttpLimits.Default, out long length));
        Assert.Equal(-1, length);
    }

    [Theory]
    [InlineData("chunked, chunked", RequestRejectionReason.ChunkedTwiceOrWithParameters)]
    [InlineData("chunked , identity", RequestRejectionReason.ChunkedNotFinal)]
    [InlineData("identity", RequestRejectionReason.ChunkedNotFinal)]
    [InlineData("chunked;ext=1", RequestRejectionReason.ChunkedTwiceOrWithParameters)]
    [InlineData("gzip;level=1, chunked", RequestRejectionReason.UnsupportedTransferCoding)]
    [InlineData("deflate,chunked", RequestRejectionReason.UnsupportedTransferCoding)]
    [InlineData("x y, chunked", RequestRejectionReason.InvalidTransferCoding)]
    [InlineData("\"chunked\"", RequestRejectionReason.InvalidTransferCoding)]
    public void Determine_rejects_transfer_codings_it_cannot_frame(string codings, RequestRejectionReason reason)
    {
        Assert.Equal(reason, Reason(Headers(("Transfer-Encoding", codings)), KnownVersion.Http11, HttpLimits.Default));
    }

    [Fact]
    public void Determine_rejects_Transfer_Encoding_with_Content_Length()
    {
        RequestHeaders headers = Headers(("Transfer-Encoding", "chunked"), ("Content-Length", "0"));

        Assert.Equal(RequestRejectionReason.TransferEncodingWithContentLength, Reason(headers, KnownVersion.Http11, HttpLimits.Default));
    }

    [Fact]
    public void Determine_rejects_Transfer_Encoding_on_HTTP_1_0()
    {
        Assert.Equal(RequestRejectionReason.TransferEncodingOnHttp10, Reason(Headers(("Transfer-Encoding", "chunked")), KnownVersion.Http10, HttpLimits.Default));
    }

    private static RequestHeaders Headers(params (string Name, string Value)[] fields)
    {
        var headers = new RequestHeaders();
        foreach ((string name, string value) in fields)
        {
            Assert.True(headers.TryAppend(Encoding.ASCII.GetBytes(name), Encoding.ASCII.GetBytes(value)));
        }

        return headers;
    }

    private static RequestRejectionReason Reason(RequestHeaders headers, KnownVersion version, HttpLimits limits)
        => Assert.Throws<BadHttpRequestException>(() => RequestFraming.Determine(headers, version, limits, out _)).Reason;
}
