using System;
using System.Globalization;
using System.Linq;
using System.Text;
using Falconet.Buffers;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>
/// The request suite through the runtime's own input, a <see cref="BlockChain"/> of 4 KiB pool blocks: a pipelined
/// request before each suite request puts a real block boundary at every offset inside it.
/// </summary>
public sealed class BlockBoundarySuiteTests
{
    // The shortest preceding request with a body of a few bytes.
    private const int MinPrecedingLength = 64;

    public static TheoryData<string> AllNames => new(RequestSuite.Valid.Keys.Concat(RequestSuite.Invalid.Keys));

    [Theory]
    [MemberData(nameof(AllNames))]
    public void Request_gives_the_same_transcript_with_a_block_boundary_at_every_offset(string name)
    {
        byte[] request = RequestSuite.Bytes(RequestSuite.Valid.TryGetValue(name, out var valid) ? valid.Request : RequestSuite.Invalid[name].Request);
        string expected = RequestDriver.RunWhole(request, RequestSuite.Limits);
        using var pool = new SlabMemoryPool("block-boundary-suite", trackLeaks: true);

        for (int offset = 1; offset < request.Length; offset++)
        {
            // A request that ends 'offset' bytes before a block end; one more block when that is too short for a request.
            int padding = SlabMemoryPool.BlockSize - (offset % SlabMemoryPool.BlockSize);
            byte[] before = PrecedingRequest(padding < MinPrecedingLength ? padding + SlabMemoryPool.BlockSize : padding);
            byte[] head = request[..offset];
            byte[] tail = request[offset..];

            // Received at once behind the preceding request: the parser meets the boundary inside complete input.
            string atOnce = ParseAfterPrecedingRequest(pool, before, [[head, tail]]);
            atOnce.ShouldBe(expected, $"at once, block boundary at {offset}");

            // Received as a socket fills blocks: the first read ends at the block end, the rest arrives in the next block.
            string twoReads = ParseAfterPrecedingRequest(pool, before, [[head], [tail]]);
            twoReads.ShouldBe(expected, $"two reads, block boundary at {offset}");
        }

        pool.BlocksOutstanding.ShouldBe(0);
    }

    /// <summary>Parses the preceding request, which ends where its first block's boundary puts it, then the suite request after it.</summary>
    private static string ParseAfterPrecedingRequest(SlabMemoryPool pool, byte[] before, byte[][][] arrivals)
    {
        using var chain = new BlockChain(pool);
        var input = new BlockChainInput(chain);
        byte[][] first = [before, .. arrivals[0]];
        string preceding = RequestDriver.Run(input, [first]);
        if (!preceding.Contains("body ContentLength", StringComparison.Ordinal))
        {
            throw new InvalidOperationException("The preceding request was not parsed:\n" + preceding);
        }

        // The suite request starts in the head block, right after the consumed preceding request, and goes on in the next.
        MemoryBlock block = chain.Head ?? throw new InvalidOperationException("The chain holds no block.");
        if (block.Start != before.Length % SlabMemoryPool.BlockSize || block.End != SlabMemoryPool.BlockSize)
        {
            throw new InvalidOperationException($"The first block holds [{block.Start}, {block.End}), not the start of the request.");
        }

        return RequestDriver.Run(input, [[], .. arrivals[1..]], RequestSuite.Limits);
    }

    /// <summary>A POST of exactly <paramref name="length"/> bytes whose Content-Length body pads it.</summary>
    private static byte[] PrecedingRequest(int length)
    {
        // Where the body length gains a digit, no body fits: a longer path takes up the byte.
        for (int pathPadding = 0; pathPadding <= 1; pathPadding++)
        {
            string start = $"POST /padding{new string('x', pathPadding)} HTTP/1.1\r\nHost: x\r\nContent-Length: ";
            for (int digits = 1; digits <= 4; digits++)
            {
                int body = length - start.Length - digits - 4;
                string declared = body.ToString(CultureInfo.InvariantCulture);
                if (body >= 0 && declared.Length == digits)
                {
                    return Encoding.ASCII.GetBytes($"{start}{declared}\r\n\r\n{new string('p', body)}");
                }
            }
        }

        throw new ArgumentOutOfRangeException(nameof(length), length, "No Content-Length makes the request this long.");
    }
}
