using System;
using System.Collections.Generic;
using Falconet.HPack.Tests.Support;
using Falconet.Http;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>
/// Value reuse on HTTP/2: as on HTTP/1.1, a request's value equal to the previous request's reuses its string; a field
/// from the dynamic table carries its entry's identity, and the same identity reuses the string without a compare.
/// </summary>
public sealed class ValueReuseTests
{
    [Fact]
    public void Each_entry_has_its_own_identity_and_every_reference_to_it_carries_it()
    {
        using var decoder = new HPackDecoder();
        var ids = new List<ulong>();
        var handler = new IdHandler(ids);
        byte[] two = new BlockBuilder().Literal("x-a", "same").Literal("x-b", "same").ToArray();

        decoder.Decode(two, ref handler).ShouldBe(HPackDecodeResult.Success);
        decoder.Decode(new BlockBuilder().Indexed(62).Indexed(63).Indexed(62).Indexed(16).Literal("x-c", "v", indexing: false).ToArray(), ref handler)
            .ShouldBe(HPackDecodeResult.Success);

        ids[0].ShouldBe(0UL, "a literal has no identity");
        ids[2].ShouldBeGreaterThanOrEqualTo(1UL << 16);
        ids[3].ShouldBeGreaterThanOrEqualTo(1UL << 16);
        ids[2].ShouldNotBe(ids[3], "two entries of equal bytes are two identities");
        ids[4].ShouldBe(ids[2]);
        ids[5].ShouldBe(16UL, "a static entry is its index");
        ids[6].ShouldBe(0UL);
    }

    [Fact]
    public void Identities_are_unique_across_decoders()
    {
        using var first = new HPackDecoder();
        using var second = new HPackDecoder();
        var ids = new List<ulong>();
        var handler = new IdHandler(ids);
        byte[] block = new BlockBuilder().Literal("x-a", "v").Indexed(62).ToArray();

        first.Decode(block, ref handler);
        second.Decode(block, ref handler);

        ids[1].ShouldNotBe(ids[3]);
    }

    [Fact]
    public void A_value_with_the_previous_identity_is_the_previous_string_and_another_is_compared_as_on_HTTP_1_1()
    {
        var headers = new RequestHeaders();
        int slot = RequestHeaders.IndexOf("user-agent"u8);
        headers.TryAppendMatched(slot, "user-agent"u8, "agent/1"u8, 70_000).ShouldBeTrue();
        string first = headers.UserAgent.ToString();

        // The same identity is the same bytes by contract: the string is reused without looking at the span.
        headers.Clear();
        headers.TryAppendMatched(slot, "user-agent"u8, "xxxxxxx"u8, 70_000).ShouldBeTrue();
        ReferenceEquals(headers.UserAgent.ToString(), first).ShouldBeTrue();

        // Another identity with equal bytes: compared, reused, and its identity kept for next time.
        headers.Clear();
        headers.TryAppendMatched(slot, "user-agent"u8, "agent/1"u8, 70_001).ShouldBeTrue();
        ReferenceEquals(headers.UserAgent.ToString(), first).ShouldBeTrue();

        // Other bytes: a new string, as on HTTP/1.1.
        headers.Clear();
        headers.TryAppendMatched(slot, "user-agent"u8, "agent/2"u8, 70_002).ShouldBeTrue();
        headers.UserAgent.ToString().ShouldBe("agent/2");

        // A value set by the application is not the previous string any more.
        headers.Clear();
        headers.TryAppendMatched(slot, "user-agent"u8, "agent/2"u8, 70_002);
        headers.UserAgent = "set by the app";
        headers.Clear();
        headers.TryAppendMatched(slot, "user-agent"u8, "agent/3"u8, 70_002).ShouldBeTrue();
        headers.UserAgent.ToString().ShouldBe("agent/3");
    }

    private readonly struct IdHandler(List<ulong> ids) : IHPackHeaderHandler
    {
        public int ResolveSlot(ReadOnlySpan<byte> name) => RequestHeaders.IndexOf(name);

        public void OnPseudoHeader(PseudoHeader header, ReadOnlySpan<byte> value)
        {
        }

        public void OnHeader(int slot, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ulong valueId) => ids.Add(valueId);
    }
}
