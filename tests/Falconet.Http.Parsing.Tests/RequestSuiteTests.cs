using System;
using System.Linq;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>The request suite parsed whole, then split every possible way: the transcript never changes.</summary>
public sealed class RequestSuiteTests
{
    public static TheoryData<string> ValidNames => new(RequestSuite.Valid.Keys);

    public static TheoryData<string> InvalidNames => new(RequestSuite.Invalid.Keys);

    public static TheoryData<string> AllNames => new(RequestSuite.Valid.Keys.Concat(RequestSuite.Invalid.Keys));

    [Theory]
    [MemberData(nameof(ValidNames))]
    public void Valid_request_produces_its_transcript(string name)
    {
        (string request, string[] transcript) = RequestSuite.Valid[name];

        string result = RequestDriver.RunWhole(RequestSuite.Bytes(request), RequestSuite.Limits);

        result.ShouldBe(string.Join("\n", transcript));
    }

    [Theory]
    [MemberData(nameof(InvalidNames))]
    public void Invalid_request_is_rejected_with_its_reason_and_the_status_of_that_reason(string name)
    {
        (string request, RequestRejectionReason reason) = RequestSuite.Invalid[name];

        string result = RequestDriver.RunWhole(RequestSuite.Bytes(request), RequestSuite.Limits);

        result.ShouldEndWith($"rejected {RequestRejections.GetStatusCode(reason)} {reason}", Case.Sensitive);
    }

    [Theory]
    [MemberData(nameof(AllNames))]
    public void Request_gives_the_same_transcript_when_split_at_every_offset(string name)
    {
        byte[] request = Request(name);
        string expected = RequestDriver.RunWhole(request, RequestSuite.Limits);

        for (int offset = 1; offset < request.Length; offset++)
        {
            byte[][] pieces = Segments.SplitAt(request, offset);

            // Received in two reads: the parser sees the first part alone, then both.
            string twoReads = RequestDriver.Run([[pieces[0]], [pieces[1]]], RequestSuite.Limits);
            twoReads.ShouldBe(expected, $"two reads split at {offset}");

            // Received at once in two blocks: every line may cross the block boundary.
            string twoBlocks = RequestDriver.Run([pieces], RequestSuite.Limits);
            twoBlocks.ShouldBe(expected, $"two blocks split at {offset}");
        }
    }

    [Theory]
    [MemberData(nameof(AllNames))]
    public void Request_gives_the_same_transcript_in_one_byte_segments(string name)
    {
        byte[] request = Request(name);
        string expected = RequestDriver.RunWhole(request, RequestSuite.Limits);
        byte[][] bytes = Segments.OneByteEach(request);

        RequestDriver.Run([bytes], RequestSuite.Limits).ShouldBe(expected);
        RequestDriver.Run(bytes.Select(b => new[] { b }), RequestSuite.Limits).ShouldBe(expected);
    }

    [Theory]
    [MemberData(nameof(AllNames))]
    public void Request_gives_the_same_transcript_in_random_blocks_and_reads(string name)
    {
        byte[] request = Request(name);
        string expected = RequestDriver.RunWhole(request, RequestSuite.Limits);
        var random = new Random(name.GetHashCode(StringComparison.Ordinal));

        for (int round = 0; round < 20; round++)
        {
            byte[][] pieces = Segments.RandomPieces(request, random, maxPiece: 9);
            int[] cuts = [0, .. Enumerable.Range(0, 3).Select(_ => random.Next(pieces.Length + 1)).Order(), pieces.Length];
            var arrivals = Enumerable.Range(0, cuts.Length - 1).Select(i => pieces[cuts[i]..cuts[i + 1]]).Where(a => a.Length > 0);

            RequestDriver.Run(arrivals, RequestSuite.Limits, destinationSize: random.Next(1, 16)).ShouldBe(expected);
        }
    }

    [Fact]
    public void Suite_holds_every_status_the_parser_answers()
    {
        int[] statuses = [.. RequestSuite.Invalid.Values.Select(v => RequestRejections.GetStatusCode(v.Reason)).Distinct().Order()];

        statuses.ShouldBe([400, 413, 414, 431, 501, 505]);
    }

    private static byte[] Request(string name) =>
        RequestSuite.Bytes(RequestSuite.Valid.TryGetValue(name, out var valid) ? valid.Request : RequestSuite.Invalid[name].Request);
}
