using Falconet.HPack.Tests.Support;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>Every decoding error of RFC 7541 is a COMPRESSION_ERROR with its own reason; nothing is delivered after it.</summary>
public sealed class DecoderErrorTests
{
    [Theory]
    [InlineData("80", HPackDecodeResult.InvalidIndex)] // index 0
    [InlineData("be", HPackDecodeResult.InvalidIndex)] // index 62 with an empty dynamic table
    [InlineData("7e 03 61 62 63", HPackDecodeResult.InvalidIndex)] // literal whose name is dynamic index 1 of an empty table
    [InlineData("ff", HPackDecodeResult.Truncated)] // an index that continues past the end
    [InlineData("ff 80", HPackDecodeResult.Truncated)]
    [InlineData("ff ff ff ff ff 7f", HPackDecodeResult.IntegerOverflow)] // more than 2^31 - 1
    [InlineData("ff 80 80 80 80 80 00", HPackDecodeResult.IntegerOverflow)] // six continuation bytes
    [InlineData("40", HPackDecodeResult.Truncated)] // a literal with no name
    [InlineData("40 05 61 62", HPackDecodeResult.Truncated)] // a name longer than the block
    [InlineData("40 01 61", HPackDecodeResult.Truncated)] // a name without a value
    [InlineData("04", HPackDecodeResult.Truncated)] // a name index (:path) with no value
    [InlineData("40 81 ff 01 61", HPackDecodeResult.InvalidHuffman)] // a Huffman name of 8 bits of ones (padding too long)
    [InlineData("04 81 18", HPackDecodeResult.InvalidHuffman)] // ':path' with a Huffman value padded with zeros
    [InlineData("04 84 ff ff ff ff", HPackDecodeResult.InvalidHuffman)] // ':path' with EOS in its value
    [InlineData("82 20", HPackDecodeResult.TableSizeUpdateAfterField)] // a size update after a field
    [InlineData("3f e2 1f", HPackDecodeResult.TableSizeUpdateTooLarge)] // 4097, above the 4096 advertised
    public void A_block_that_breaks_RFC_7541_is_a_compression_error(string hex, HPackDecodeResult expected)
    {
        using var session = new DecoderSession();

        HPackDecodeResult result = session.Decode(hex);

        result.ShouldBe(expected);
        result.IsCompressionError().ShouldBeTrue();
    }

    [Fact]
    public void Size_updates_at_the_start_of_a_block_are_accepted_one_after_another()
    {
        using var session = new DecoderSession();
        session.Decode("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572").ShouldBe(HPackDecodeResult.Success);

        // Down to 0 (evicting everything), then up to 4096, then a field.
        session.Decode("20 3f e1 1f 82").ShouldBe(HPackDecodeResult.Success);

        session.Decoder.DynamicTableCount.ShouldBe(0);
        session.Decoder.DynamicTableMaxSize.ShouldBe(4096);
        session.Recording.Fields.ShouldBe([":method: GET"]);
    }

    [Fact]
    public void A_size_update_evicts_down_to_the_new_size_and_an_index_past_it_is_then_invalid()
    {
        using var session = new DecoderSession();
        session.Decode("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572").ShouldBe(HPackDecodeResult.Success);
        session.Decode("be").ShouldBe(HPackDecodeResult.Success);

        // 54 bytes cannot hold the 55-byte entry.
        session.Decode("3f 17 be").ShouldBe(HPackDecodeResult.InvalidIndex);
    }

    [Fact]
    public void An_advertised_size_of_zero_accepts_only_updates_to_zero()
    {
        using var session = new DecoderSession(maxDynamicTableSize: 0);

        session.Decode("20 82").ShouldBe(HPackDecodeResult.Success);
        session.Decode("21").ShouldBe(HPackDecodeResult.TableSizeUpdateTooLarge);
    }

    [Fact]
    public void Fields_before_an_error_were_delivered_and_none_after_it()
    {
        using var session = new DecoderSession();

        session.Decode("82 86 80 84").ShouldBe(HPackDecodeResult.InvalidIndex);

        session.Recording.Fields.ShouldBe([":method: GET", ":scheme: http"]);
    }

    [Fact]
    public void An_empty_block_is_an_empty_header_list()
    {
        using var session = new DecoderSession();

        session.Decode([]).ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBeEmpty();
    }
}
