using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Falconet.Fuzz;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// The request suite through the whole connection loop (a real server on the in-memory transport): a request gets the
/// same answer however its bytes arrive, split at every byte or at random points of a pipelined batch.
/// </summary>
public sealed class SplitInvarianceTests : IAsyncLifetime
{
    private ConnectionFuzzTarget _target = null!;

    public static TheoryData<string> AllNames => new(RequestSuite.Valid.Keys.Concat(RequestSuite.Invalid.Keys));

    public async Task InitializeAsync() => _target = await ConnectionFuzzTarget.StartAsync(trackLeaks: true);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    [Theory]
    [MemberData(nameof(AllNames))]
    public void A_suite_request_gets_the_same_answer_split_at_every_byte(string name)
    {
        byte[] request = RequestSuite.Bytes(RequestSuite.Valid.TryGetValue(name, out var valid) ? valid.Request : RequestSuite.Invalid[name].Request);
        IReadOnlyList<Answer> whole = _target.Exchange([request]);

        // The parser suite's requests often lack Host, which the connection requires: some valid ones are refused here too.
        // Every invalid one is refused, with an error that comes last.
        if (RequestSuite.Invalid.ContainsKey(name))
        {
            whole.ShouldNotBeEmpty();
            whole[^1].StatusCode.ShouldBeGreaterThanOrEqualTo(400);
        }

        for (int offset = 1; offset < request.Length; offset++)
        {
            _target.RunSplit(request, [request.AsMemory(0, offset), request.AsMemory(offset)]).ShouldBe(whole);
        }

        _target.RunSplit(request, [.. Enumerable.Range(0, request.Length).Select(i => request.AsMemory(i, 1))]).ShouldBe(whole);
    }

    [Fact]
    public void A_pipelined_batch_gets_the_same_answers_split_at_random_points()
    {
        var random = new Random(20261123);
        for (int round = 0; round < 300; round++)
        {
            // A few valid requests, sometimes followed by a refused one and a request that must never be answered.
            List<byte> batch = [];
            int count = random.Next(2, 6);
            for (int i = 0; i < count; i++)
            {
                batch.AddRange(FuzzSeeds.Valid[random.Next(FuzzSeeds.Valid.Count)]);
            }

            bool refused = random.Next(3) == 0;
            if (refused)
            {
                batch.AddRange(FuzzSeeds.Invalid[random.Next(FuzzSeeds.Invalid.Count)]);
                batch.AddRange("GET /never HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
            }

            byte[] bytes = [.. batch];
            var pieces = new List<ReadOnlyMemory<byte>>();
            for (int start = 0; start < bytes.Length;)
            {
                int length = Math.Min(random.Next(1, 40), bytes.Length - start);
                pieces.Add(bytes.AsMemory(start, length));
                start += length;
            }

            IReadOnlyList<Answer> answers = _target.RunSplit(bytes, pieces);
            answers.ShouldNotContain(answer => answer.Body.StartsWith("GET /never ", StringComparison.Ordinal));
        }
    }
}
