using System;
using System.Buffers;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Falconet.Buffers;
using Shouldly;

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

        chain.Length.ShouldBe(10_000);
        sequence.Length.ShouldBe(10_000);
        sequence.ToArray().ShouldBe(data);
        CountSegments(sequence).ShouldBe(3);
        pool.BlocksOutstanding.ShouldBe(3);
    });

    [Fact(Timeout = Timeout)]
    public Task Sequence_segments_are_the_blocks_memory_without_a_copy() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-nocopy");
        using var chain = new BlockChain(pool);
        chain.Write(Pattern(5_000));

        ReadOnlySequence<byte> sequence = chain.GetSequence();
        MemoryBlock head = chain.Head!;

        sequence.Start.GetObject().ShouldBeSameAs(head);
        MemoryMarshal.TryGetArray(sequence.First, out ArraySegment<byte> segment).ShouldBeTrue();
        MemoryMarshal.TryGetArray<byte>(head.Memory, out ArraySegment<byte> block).ShouldBeTrue();
        segment.Array.ShouldBeSameAs(block.Array);
        segment.Offset.ShouldBe(block.Offset);
        sequence.GetPosition(SlabMemoryPool.BlockSize).GetObject().ShouldBeSameAs(head.NextBlock);
    });

    [Fact(Timeout = Timeout)]
    public Task Consume_inside_a_later_block_returns_the_fully_consumed_blocks_before_it() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-consume");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(10_000);
        chain.Write(data);

        chain.Consume(chain.GetSequence().GetPosition(5_000));

        pool.BlocksOutstanding.ShouldBe(2);
        chain.Length.ShouldBe(5_000);
        chain.GetSequence().ToArray().ShouldBe(data.AsSpan(5_000).ToArray());

        chain.Consume(chain.GetSequence().GetPosition(1));
        chain.GetSequence().ToArray().ShouldBe(data.AsSpan(5_001).ToArray());

        chain.Consume(chain.GetSequence().End);
        chain.Length.ShouldBe(0);
        chain.GetSequence().IsEmpty.ShouldBeTrue();
        pool.BlocksOutstanding.ShouldBe(1); // the tail stays for the next write, rewound
        chain.GetWritableMemory().Length.ShouldBe(SlabMemoryPool.BlockSize);
    });

    [Fact(Timeout = Timeout)]
    public Task Consume_at_the_end_of_a_block_returns_that_block() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-boundary");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(3 * SlabMemoryPool.BlockSize);
        chain.Write(data);
        CountSegments(chain.GetSequence()).ShouldBe(3);
        MemoryBlock head = chain.Head!;

        // The position at the end of the first segment, as a parser that stopped there would report it.
        chain.Consume(new SequencePosition(head, SlabMemoryPool.BlockSize));

        pool.BlocksOutstanding.ShouldBe(2);
        chain.Head.ShouldNotBeSameAs(head);
        chain.GetSequence().ToArray().ShouldBe(data.AsSpan(SlabMemoryPool.BlockSize).ToArray());
    });

    [Fact(Timeout = Timeout)]
    public Task GetWritableMemory_and_Advance_fill_the_tail_and_rent_when_the_hint_does_not_fit() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-advance");
        using var chain = new BlockChain(pool);

        Memory<byte> first = chain.GetWritableMemory(100);
        first.Length.ShouldBe(SlabMemoryPool.BlockSize);
        first.Span.Slice(0, 4_000).Fill(1);
        chain.Advance(4_000);

        Memory<byte> second = chain.GetWritableMemory(100); // 96 bytes left: a new block
        second.Length.ShouldBe(SlabMemoryPool.BlockSize);
        second.Span.Slice(0, 10).Fill(2);
        chain.Advance(10);

        chain.Length.ShouldBe(4_010);
        pool.BlocksOutstanding.ShouldBe(2);
        Should.Throw<ArgumentOutOfRangeException>(() => chain.Advance(SlabMemoryPool.BlockSize));
        Should.Throw<ArgumentOutOfRangeException>(() => chain.GetWritableMemory(SlabMemoryPool.BlockSize + 1));
        byte[] all = chain.GetSequence().ToArray();
        (Array.LastIndexOf(all, (byte)1) + 1).ShouldBe(4_000);
        all[^1].ShouldBe((byte)2);
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

        chain.Length.ShouldBe(120);
        pool.BlocksOutstanding.ShouldBe(2); // "more" went into the received block's free space
        chain.GetSequence().Slice(100).ToArray().ShouldBe("GET / HTTP/1.1\r\nmore"u8.ToArray());

        chain.Dispose();
        pool.BlocksOutstanding.ShouldBe(0);
        chain.Length.ShouldBe(0);
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
        pool.BlocksOutstanding.ShouldBe(4);

        chain.TruncateTo(4_000);

        chain.Length.ShouldBe(4_000);
        pool.BlocksOutstanding.ShouldBe(2);
        chain.GetSequence().ToArray().ShouldBe(kept.AsSpan(1_000).ToArray());

        chain.Write("next"u8);
        pool.BlocksOutstanding.ShouldBe(2); // into the free space of the block the cut ended in
        chain.GetSequence().Slice(4_000).ToArray().ShouldBe("next"u8.ToArray());
    });

    [Fact(Timeout = Timeout)]
    public Task TruncateTo_at_a_block_end_keeps_that_block_and_to_zero_keeps_one_rewound_block() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        using var pool = new SlabMemoryPool("chain-truncate-edges");
        using var chain = new BlockChain(pool);
        byte[] data = Pattern(3 * SlabMemoryPool.BlockSize);
        chain.Write(data);

        chain.TruncateTo(chain.Length); // nothing to drop
        pool.BlocksOutstanding.ShouldBe(3);

        chain.TruncateTo(SlabMemoryPool.BlockSize);
        pool.BlocksOutstanding.ShouldBe(1);
        chain.GetSequence().ToArray().ShouldBe(data.AsSpan(0, SlabMemoryPool.BlockSize).ToArray());

        chain.Consume(chain.GetSequence().GetPosition(10));
        chain.TruncateTo(0);
        chain.Length.ShouldBe(0);
        chain.GetSequence().IsEmpty.ShouldBeTrue();
        pool.BlocksOutstanding.ShouldBe(1);
        chain.GetWritableMemory().Length.ShouldBe(SlabMemoryPool.BlockSize);

        Should.Throw<ArgumentOutOfRangeException>(() => chain.TruncateTo(1));
        Should.Throw<ArgumentOutOfRangeException>(() => chain.TruncateTo(-1));
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
