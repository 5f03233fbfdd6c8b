using System;
using System.Buffers;
using System.Linq;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>
/// The connection's one-call parse of a head received in one piece (<see cref="Http1Parser.TryParseRequestHead"/>) against
/// the two calls it stands in for: what it settles, it settles as they do; what it leaves, the connection parses with them.
/// </summary>
public sealed class RequestHeadTests
{
    public static TheoryData<string> AllNames => new(RequestSuite.Valid.Keys.Concat(RequestSuite.Invalid.Keys));

    [Theory]
    [MemberData(nameof(AllNames))]
    public void One_call_parse_of_every_prefix_agrees_with_the_request_line_and_header_calls(string name)
    {
        byte[] request = RequestSuite.Bytes(RequestSuite.Valid.TryGetValue(name, out var valid) ? valid.Request : RequestSuite.Invalid[name].Request);
        for (int length = 0; length <= request.Length; length++)
        {
            byte[] received = request[..length];
            (string log, int consumed, RequestRejectionReason? reason) expected = ParseWithTwoCalls(received);
            var record = new RequestRecord();
            var handler = new RecordingHandler(record);
            bool complete;
            int consumed;
            try
            {
                complete = Http1Parser.TryParseRequestHead(ref handler, received, RequestSuite.Limits, out consumed);
            }
            catch (BadHttpRequestException exception)
            {
                // Refused: only for a head the two calls refuse for the same reason.
                expected.reason.ShouldNotBeNull($"{name}, {length} bytes");
                exception.Reason.ShouldBe(expected.reason.Value, $"{name}, {length} bytes");
                continue;
            }

            if (complete)
            {
                consumed.ShouldBe(expected.consumed, $"{name}, {length} bytes");
                string.Join("\n", record.Log).ShouldBe(expected.log, $"{name}, {length} bytes");
            }
        }
    }

    [Fact]
    public void Head_of_a_common_request_received_whole_is_settled_in_one_call()
    {
        byte[] request = RequestSuite.Bytes("GET /plaintext HTTP/1.1\r\nHost: tfb-server\r\nAccept: text/plain,text/html;q=0.9\r\nConnection: keep-alive\r\n\r\nGET /next");
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);

        Http1Parser.TryParseRequestHead(ref handler, request, RequestSuite.Limits, out int consumed).ShouldBeTrue();

        consumed.ShouldBe(request.Length - "GET /next".Length);
        record.Log.ShouldBe(
        [
            "GET (Get) /plaintext Origin query=-1 Http11",
            "[Host]=[tfb-server]",
            "[Accept]=[text/plain,text/html;q=0.9]",
            "[Connection]=[keep-alive]",
            "end of headers",
        ]);
    }

    /// <summary>The request line and then the header section, each with its own call, over one segment: the connection's other path.</summary>
    private static (string Log, int Consumed, RequestRejectionReason? Reason) ParseWithTwoCalls(byte[] received)
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(received));
        var state = default(HeaderParseState);
        try
        {
            bool complete = Http1Parser.TryParseRequestLine(ref handler, ref reader, RequestSuite.Limits)
                && Http1Parser.TryParseHeaders(ref handler, ref reader, RequestSuite.Limits, ref state);
            return (string.Join("\n", record.Log), complete ? (int)reader.Consumed : -1, null);
        }
        catch (BadHttpRequestException exception)
        {
            return (string.Join("\n", record.Log), -1, exception.Reason);
        }
    }
}
