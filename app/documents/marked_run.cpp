#include "documents/marked_run.h"

#include "documents/inline_markup.h"

namespace dragoman::documents {

void MarkedRun::text(std::string_view words) {
    if (words.empty()) return;
    if (!items_.empty() && items_.back().kind == Item::Kind::Text)
        items_.back().text += words;
    else
        items_.push_back({Item::Kind::Text, std::string(words), {}});
}

void MarkedRun::open(std::string markup, std::string key) {
    openItems_.push_back(items_.size());
    items_.push_back({Item::Kind::Open, std::move(markup), std::move(key)});
}

void MarkedRun::close(std::string markup, std::string key) {
    // Only the innermost open span closes: a closer that would cross spans is kept as standalone markup.
    if (openItems_.empty() || items_[openItems_.back()].key != key) return code(std::move(markup));
    const auto opener = openItems_.back();
    openItems_.pop_back();
    items_[opener].pair = static_cast<int>(items_.size());
    items_.push_back({Item::Kind::Close, std::move(markup), std::move(key), static_cast<int>(opener)});
}

void MarkedRun::delimiter(std::string markup, bool canOpen, bool canClose) {
    if (canClose && !openItems_.empty() && items_[openItems_.back()].key == markup) return close(markup, markup);
    if (!canOpen) return text(markup);
    auto key = markup;
    open(std::move(markup), std::move(key));
    items_.back().textIfAlone = true;
}

void MarkedRun::code(std::string markup) {
    items_.push_back({Item::Kind::Code, std::move(markup), {}});
}

void MarkedRun::writeTo(SegmentWriter& out, const SegmentWriter::Shape& shape) {
    std::string tagged, words;
    std::vector<SegmentWriter::Span> spans;
    std::vector<int> number(items_.size(), 0);
    for (std::size_t i = 0; i < items_.size(); ++i) {
        auto& item = items_[i];
        if (item.kind == Item::Kind::Open && item.pair < 0) {  // never closed
            if (item.textIfAlone) {
                tagged += item.text;
                words += item.text;
                continue;
            }
            item.kind = Item::Kind::Code;
        }
        switch (item.kind) {
            case Item::Kind::Text:
                tagged += item.text;
                words += item.text;
                break;
            case Item::Kind::Open:
                spans.push_back({item.text, items_[static_cast<std::size_t>(item.pair)].text});
                number[i] = static_cast<int>(spans.size());
                tagged += openTag(number[i]);
                break;
            case Item::Kind::Close:
                tagged += closeTag(number[static_cast<std::size_t>(item.pair)]);
                break;
            case Item::Kind::Code:
                spans.push_back({item.text, {}});
                tagged += openTag(static_cast<int>(spans.size())) + closeTag(static_cast<int>(spans.size()));
                break;
        }
    }
    if (spans.empty()) {
        out.segment(words, shape);
    } else if (taggable(words)) {
        out.markedSegment(tagged, std::move(spans), shape);
    } else {  // words that read as tags: the pieces between the markup go apart
        for (const auto& item : items_)
            if (item.kind == Item::Kind::Text)
                out.segment(item.text, shape);
            else
                out.literal(item.text);
    }
    items_.clear();
    openItems_.clear();
}

}  // namespace dragoman::documents
