using Falconet.HPack.Tests.Support;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>The examples of RFC 7541 Appendix C, decoded block after block on one decoder, with the table after each.</summary>
public sealed class AppendixCTests
{
    [Fact]
    public void C_2_1_a_literal_with_indexing_is_delivered_and_added_to_the_table()
    {
        using var session = new DecoderSession();

        session.Decode("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572").ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe(["custom-key: custom-header"]);
        session.Decoder.DynamicTableSize.ShouldBe(55);
        session.Decoder.DynamicTableCount.ShouldBe(1);
    }

    [Fact]
    public void C_2_2_a_literal_without_indexing_leaves_the_table_empty()
    {
        using var session = new DecoderSession();

        session.Decode("040c 2f73 616d 706c 652f 7061 7468").ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe([":path: /sample/path"]);
        session.Decoder.DynamicTableCount.ShouldBe(0);
    }

    [Fact]
    public void C_2_3_a_never_indexed_literal_leaves_the_table_empty()
    {
        using var session = new DecoderSession();

        session.Decode("1008 7061 7373 776f 7264 0673 6563 7265 74").ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe(["password: secret"]);
        session.Decoder.DynamicTableCount.ShouldBe(0);
    }

    [Fact]
    public void C_2_4_an_indexed_field_is_the_static_entry()
    {
        using var session = new DecoderSession();

        session.Decode("82").ShouldBe(HPackDecodeResult.Success);

        session.Recording.Fields.ShouldBe([":method: GET"]);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void C_3_and_C_4_three_requests_share_the_dynamic_table(bool huffman)
    {
        using var session = new DecoderSession();
        string[] blocks = huffman
            ? ["8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", "8286 84be 5886 a8eb 1064 9cbf", "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"]
            : ["8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", "8286 84be 5808 6e6f 2d63 6163 6865",
               "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"];

        session.Decode(blocks[0]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe([":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com"]);
        session.Decoder.DynamicTableSize.ShouldBe(57);

        session.Decode(blocks[1]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe([":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com", "cache-control: no-cache"]);
        session.Decoder.DynamicTableSize.ShouldBe(110);

        session.Decode(blocks[2]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe([":method: GET", ":scheme: https", ":path: /index.html", ":authority: www.example.com", "custom-key: custom-value"]);
        session.Decoder.DynamicTableSize.ShouldBe(164);
        session.Decoder.DynamicTableCount.ShouldBe(3);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void C_5_and_C_6_three_responses_evict_entries_from_a_256_byte_table(bool huffman)
    {
        using var session = new DecoderSession(maxDynamicTableSize: 256);
        string[] blocks = huffman
            ?
            [
                "3fe1 01" + // the size update to 256 that SETTINGS_HEADER_TABLE_SIZE = 256 implies
                "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
                "4883 640e ffc1 c0bf",
                "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b " +
                "3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
            ]
            :
            [
                "3fe1 01" +
                "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 " +
                "7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                "4803 3330 37c1 c0bf",
                "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 " +
                "444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
            ];

        session.Decode(blocks[0]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe([":status: 302", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:21 GMT", "location: https://www.example.com"]);
        session.Decoder.DynamicTableSize.ShouldBe(222);

        // ":status: 307" evicts ":status: 302", the oldest entry.
        session.Decode(blocks[1]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe([":status: 307", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:21 GMT", "location: https://www.example.com"]);
        session.Decoder.DynamicTableSize.ShouldBe(222);
        session.Decoder.DynamicTableCount.ShouldBe(4);

        session.Decode(blocks[2]).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(
        [
            ":status: 200", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:22 GMT", "location: https://www.example.com",
            "content-encoding: gzip", "set-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
        ]);
        session.Decoder.DynamicTableSize.ShouldBe(215);
        session.Decoder.DynamicTableCount.ShouldBe(3);
    }
}
