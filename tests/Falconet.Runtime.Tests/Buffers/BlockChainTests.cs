using System;
using System.Buffers;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Runtime.Tests.Buffers;

public sealed class BlockChainTests
{
    private const int Timeout = 20_000;

    [Fact(Timeout = Timeout)]
    public Task Write_across_block_boundaries_reads_back_as_one_sequence_of_blocks() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-write");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(10_000);

        chain.Write(data.AsSpan(0, 3_000));
        chain.Write(data.AsSpan(3_000));
        ReadOnlySequence<byte> sequence = chain.GetSequence();

        Assert.Equal(10_000, chain.Length);
        Assert.Equal(10_000, sequence.Length);
        Assert.Equal(data, sequence.ToArray());
        Assert.Equal(3, CountSegments(sequence));
        Assert.Equal(3, pool.BlocksOutstanding);
    });

    [Fact(Timeout = Timeout)]
    public Task Sequence_segments_are_the_blocks_memory_without_a_copy() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-nocopy");
        using var chain = new BlockChain(pool);
        chain.Write(Pattern(5_000));

        ReadOnlySequence<byte> sequence = chain.GetSequence();
        MemoryBlock head = chain.Head!;

        Assert.Same(head, sequence.Start.GetObject());
        Assert.True(MemoryMarshal.TryGetArray(sequence.First, out ArraySegment<byte> segment));
        Assert.True(MemoryMarshal.TryGetArray<byte>(head.Memory, out ArraySegment<byte> block));
        Assert.Same(block.Array, segment.Array);
        Assert.Equal(block.Offset, segment.Offset);
        Assert.Same(head.NextBlock, sequence.GetPosition(SlabMemoryPool.BlockSize).GetObject());
    });

    [Fact(Timeout = Timeout)]
    public Task Consume_inside_a_later_block_returns_the_fully_consumed_blocks_before_it() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-consume");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(10_000);
        chain.Write(data);

        chain.Consume(chain.GetSequence().GetPosition(5_000));

        Assert.Equal(2, pool.BlocksOutstanding);
        Assert.Equal(5_000, chain.Length);
        Assert.Equal(data.AsSpan(5_000).ToArray(), chain.GetSequence().ToArray());

        chain.Consume(chain.GetSequence().GetPosition(1));
        Assert.Equal(data.AsSpan(5_001).ToArray(), chain.GetSequence().ToArray());

        chain.Consume(chain.GetSequence().End);
        Assert.Equal(0, chain.Length);
        Assert.True(chain.GetSequence().IsEmpty);
        Assert.Equal(1, pool.BlocksOutstanding); // the tail stays for the next write, rewound
        Assert.Equal(SlabMemoryPool.BlockSize, chain.GetWritableMemory().Length);
    });

    [Fact(Timeout = Timeout)]
    public Task Consume_at_the_end_of_a_block_returns_that_block() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-boundary");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(3 * SlabMemoryPool.BlockSize);
        chain.Write(data);
        Assert.Equal(3, CountSegments(chain.GetSequence()));
        MemoryBlock head = chain.Head!;

        // The position at the end of the first segment, as a parser that stopped there would report it.
        chain.Consume(new SequencePosition(head, SlabMemoryPool.BlockSize));

        Assert.Equal(2, pool.BlocksOutstanding);
        Assert.NotSame(head, chain.Head);
        Assert.Equal(data.AsSpan(SlabMemoryPool.BlockSize).ToArray(), chain.GetSequence().ToArray());
    });

    [Fact(Timeout = Timeout)]
    public Task GetWritableMemory_and_Advance_fill_the_tail_and_rent_when_the_hint_does_not_fit() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-advance");
        using var chain = new BlockChain(pool);

        Memory<byte> first = chain.GetWritableMemory(100);
        Assert.Equal(SlabMemoryPool.BlockSize, first.Length);
        first.Span.Slice(0, 4_000).Fill(1);
        chain.Advance(4_000);

        Memory<byte> second = chain.GetWritableMemory(100); // 96 bytes left: a new block
        Assert.Equal(SlabMemoryPool.BlockSize, second.Length);
        second.Span.Slice(0, 10).Fill(2);
        chain.Advance(10);

        Assert.Equal(4_010, chain.Length);
        Assert.Equal(2, pool.BlocksOutstanding);
        Assert.Throws<ArgumentOutOfRangeException>(() => chain.Advance(SlabMemoryPool.BlockSize));
        Assert.Throws<ArgumentOutOfRangeException>(() => chain.GetWritableMemory(SlabMemoryPool.BlockSize + 1));
        byte[] all = chain.GetSequence().ToArray();
        Assert.Equal(4_000, Array.LastIndexOf(all, (byte)1) + 1);
        Assert.Equal(2, all[^1]);
    });

    [Fact(Timeout = Timeout)]
    public Task Append_takes_a_received_block_and_Dispose_returns_every_block() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-append");
        var chain = new BlockChain(pool);
        chain.Write(Pattern(100));
        MemoryBlock received = pool.Rent();
        "GET / HTTP/1.1\r\n"u8.CopyTo(received.Writable);
        received.End = 16;

        chain.Append(received);
        chain.Write("more"u8);

        Assert.Equal(120, chain.Length);
        Assert.Equal(2, pool.BlocksOutstanding); // "more" went into the received block's free space
        Assert.Equal("GET / HTTP/1.1\r\nmore"u8.ToArray(), chain.GetSequence().Slice(100).ToArray());

        chain.Dispose();
        Assert.Equal(0, pool.BlocksOutstanding);
        Assert.Equal(0, chain.Length);
    });

    [Fact(Timeout = Timeout)]
    public Task TruncateTo_drops_later_bytes_returns_their_blocks_and_later_writes_continue_there() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-truncate");
        using var chain = new BlockChain(pool);
        byte[] kept = Pattern(5_000);
        chain.Write(kept);
        chain.Consume(chain.GetSequence().GetPosition(1_000)); // the head starts inside its block
        chain.Write(Pattern(9_000));
        Assert.Equal(4, pool.BlocksOutstanding);

        chain.TruncateTo(4_000);

        Assert.Equal(4_000, chain.Length);
        Assert.Equal(2, pool.BlocksOutstanding);
        Assert.Equal(kept.AsSpan(1_000).ToArray(), chain.GetSequence().ToArray());

        chain.Write("next"u8);
        Assert.Equal(2, pool.BlocksOutstanding); // into the free space of the block the cut ended in
        Assert.Equal("next"u8.ToArray(), chain.GetSequence().Slice(4_000).ToArray());
    });

    [Fact(Timeout = Timeout)]
    public Task TruncateTo_at_a_block_end_keeps_that_block_and_to_zero_keeps_one_rewound_block() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-truncate-edges");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(3 * SlabMemoryPool.BlockSize);
        chain.Write(data);

        chain.TruncateTo(chain.Length); // nothing to drop
        Assert.Equal(3, pool.BlocksOutstanding);

        chain.TruncateTo(SlabMemoryPool.BlockSize);
        Assert.Equal(1, pool.BlocksOutstanding);
        Assert.Equal(data.AsSpan(0, SlabMemoryPool.BlockSize).ToArray(), chain.GetSequence().ToArray());

        chain.Consume(chain.GetSequence().GetPosition(10));
        chain.TruncateTo(0);
        Assert.Equal(0, chain.Length);
        Assert.True(chain.GetSequence().IsEmpty);
        Assert.Equal(1, pool.BlocksOutstanding);
        Assert.Equal(SlabMemoryPool.BlockSize, chain.GetWritableMemory().Length);

        Assert.Throws<ArgumentOutOfRangeException>(() => chain.TruncateTo(1));
        Assert.Throws<ArgumentOutOfRangeException>(() => chain.TruncateTo(-1));
    });

    private static byte[] Pattern(int length)
    {
        var data = new byte[length];
        new Random(length).NextBytes(data);
        return data;
    }

    private static int CountSegments(ReadOnlySequence<byte> sequence)
    {
        int count = 0;
        foreach (ReadOnlyMemory<byte> _ in sequence)
        {
            count++;
        }

        return count;
    }
}
