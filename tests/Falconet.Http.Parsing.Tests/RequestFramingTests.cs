using System.Text;
using Falconet.Http.Http1;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>RequestFraming.Determine on header sets filled the way the connection fills them.</summary>
public sealed class RequestFramingTests
{
    [Fact]
    public void Determine_returns_None_without_framing_headers()
    {
        RequestFraming.Determine(Headers(), KnownVersion.Http11, HttpLimits.Default, out long length).ShouldBe(RequestBodyKind.None);
        length.ShouldBe(0);
    }

    [Fact]
    public void Determine_returns_the_declared_Content_Length()
    {
        RequestHeaders headers = Headers(("Content-Length", "42"));

        RequestFraming.Determine(headers, KnownVersion.Http10, HttpLimits.Default, out long length).ShouldBe(RequestBodyKind.ContentLength);
        length.ShouldBe(42);
    }

    [Fact]
    public void Determine_accepts_a_Content_Length_of_exactly_the_body_limit_and_answers_413_above()
    {
        var limits = new HttpLimits { MaxRequestBodySize = 100 };

        RequestFraming.Determine(Headers(("Content-Length", "100")), KnownVersion.Http11, limits, out _).ShouldBe(RequestBodyKind.ContentLength);
        Reason(Headers(("Content-Length", "101")), KnownVersion.Http11, limits).ShouldBe(RequestRejectionReason.BodyTooLarge);
    }

    [Fact]
    public void Determine_returns_Chunked_for_a_list_ending_in_chunked_across_lines()
    {
        RequestHeaders headers = Headers(("Transfer-Encoding", " , "), ("Transfer-Encoding", "Chunked"));

        RequestFraming.Determine(headers, KnownVersion.Http11, HttpLimits.Default, out long length).ShouldBe(RequestBodyKind.Chunked);
        length.ShouldBe(-1);
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
        Reason(Headers(("Transfer-Encoding", codings)), KnownVersion.Http11, HttpLimits.Default).ShouldBe(reason);
    }

    [Fact]
    public void Determine_rejects_Transfer_Encoding_with_Content_Length()
    {
        RequestHeaders headers = Headers(("Transfer-Encoding", "chunked"), ("Content-Length", "0"));

        Reason(headers, KnownVersion.Http11, HttpLimits.Default).ShouldBe(RequestRejectionReason.TransferEncodingWithContentLength);
    }

    [Fact]
    public void Determine_rejects_Transfer_Encoding_on_HTTP_1_0()
    {
        Reason(Headers(("Transfer-Encoding", "chunked")), KnownVersion.Http10, HttpLimits.Default).ShouldBe(RequestRejectionReason.TransferEncodingOnHttp10);
    }

    private static RequestHeaders Headers(params (string Name, string Value)[] fields)
    {
        var headers = new RequestHeaders();
        foreach ((string name, string value) in fields)
        {
            headers.TryAppend(Encoding.ASCII.GetBytes(name), Encoding.ASCII.GetBytes(value)).ShouldBeTrue();
        }

        return headers;
    }

    private static RequestRejectionReason Reason(RequestHeaders headers, KnownVersion version, HttpLimits limits)
        => Should.Throw<BadHttpRequestException>(() => RequestFraming.Determine(headers, version, limits, out _)).Reason;
}
