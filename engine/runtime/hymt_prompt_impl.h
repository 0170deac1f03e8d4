#pragma once
#include "util/error.h"

namespace dragoman {

template <typename HasToken>
ChatFormat detectChatFormat(HasToken has) {
    const std::string bos = "<｜hy_begin▁of▁sentence｜>", user = "<｜hy_User｜>", assistant = "<｜hy_Assistant｜>";
    if (has(bos) && has(user) && has(assistant)) {
        ChatFormat f{bos, user, assistant, {"<｜hy_place▁holder▁no▁2｜>"}};
        return f;
    }
    // HY-MT1.5-7B keeps the older Hunyuan-7B tokens: <|startoftext|>prompt<|extra_0|>, ending with <|eos|>.
    if (has("<|startoftext|>") && has("<|extra_0|>")) return ChatFormat{"<|startoftext|>", "", "<|extra_0|>", {"<|eos|>", "<|extra_4|>"}};
    throw Error("tokenizer", "the tokenizer has neither HY-MT1.5 chat format's special tokens (<｜hy_User｜> or <|extra_0|>)");
}

}  // namespace dragoman
